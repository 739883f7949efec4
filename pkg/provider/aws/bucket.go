// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Lifecycle rule IDs this extension owns. Rules with other IDs are drift and are removed.
const (
	ruleAbortMultipart = "gardener-backup-abort-incomplete-multipart"
	ruleDeferredPrefix = "gardener-backup-deferred-"
	// abortMultipartDays is how long an incomplete multipart upload may linger.
	abortMultipartDays = 7
)

// EnsureBucket implements objectstore.Management: create the bucket if needed, then converge every
// setting of the store's config on every call, so that drift is corrected.
func (s *management) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	if err := awsapi.ValidateBucketName(b.Name); err != nil {
		return err
	}
	cfg := s.cfg
	region := b.Region
	if s.regionOverride != "" {
		region = s.regionOverride
	}
	if err := s.ensureExists(ctx, b.Name, region, cfg.Immutability != nil); err != nil {
		return err
	}
	lockOn := false // whether the bucket has Object Lock on, as convergeImmutability found or left it
	steps := []struct {
		setting  awsapi.Setting // the switch that turns the step (or its part) off; empty: none
		skip     bool           // the whole step is skipped when setting is disabled
		what     string
		apply    func(context.Context, string, *awsapi.BackupBucketConfig) error
		notKnown []string // extra codes meaning "this store does not know the API" for this step
	}{
		{what: "immutability (versioning and Object Lock)", apply: func(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig) (err error) {
			lockOn, err = s.convergeImmutability(ctx, name, cfg)
			return err
		}},
		{setting: awsapi.SettingDefaultEncryption, skip: true, what: "default encryption", apply: s.convergeEncryption},
		{setting: awsapi.SettingPublicAccessBlock, skip: true, what: "public access block", apply: s.convergePublicAccessBlock},
		{setting: awsapi.SettingTLSOnlyPolicy, skip: true, what: "TLS-only bucket policy", apply: s.convergeTLSPolicy},
		// Always runs: it also keeps the deferred-deletion rules (see deferral.go).
		{setting: awsapi.SettingMultipartAbortLifecycle, what: "the lifecycle rules (aborting incomplete multipart uploads, deferred deletion)", apply: func(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig) error {
			return s.convergeLifecycle(ctx, name, cfg, lockOn)
		}, notKnown: []string{"InvalidArgument"}},
	}
	for _, step := range steps {
		if step.skip && cfg.Disabled(step.setting) {
			continue
		}
		if err := step.apply(ctx, b.Name, cfg); err != nil {
			if step.setting != "" && !cfg.Disabled(step.setting) && (unimplemented(err) || slices.Contains(step.notKnown, errorCode(err))) {
				return fmt.Errorf("%w: %s is not implemented by this S3-compatible store; list %q in providerConfig.disabledSettings to run without it: %w", objectstore.ErrUnsupported, step.what, step.setting, err)
			}
			return fmt.Errorf("converging %s: %w", step.what, err)
		}
	}
	return nil
}

// unimplemented reports an answer of a store that does not know an API: NotImplemented, or the
// MalformedXML / MethodNotAllowed that some S3-compatible stores (MinIO among them) give for an
// API they do not route, since the SDK's own XML is well-formed.
func unimplemented(err error) bool {
	switch errorCode(err) {
	case "MalformedXML", "MethodNotAllowed", "XNotImplemented":
		return true
	}
	return errors.Is(err, objectstore.ErrUnsupported)
}

// ensureExists creates the bucket in the store's region, or checks that the existing one is ours
// and in that region. A HEAD answer has no body and so no error code: it is never passed on as it
// is, but read for the region S3 names (X-Amz-Bucket-Region), or asked again with a call that
// answers with a body.
func (s *management) ensureExists(ctx context.Context, name, region string, objectLock bool) error {
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &name})
	switch {
	case err == nil:
		return s.checkRegion(ctx, name, region)
	case s.regionMismatch(name, err) != nil:
		return s.regionMismatch(name, err)
	case statusCode(err) == http.StatusNotFound, statusCode(err) == http.StatusForbidden:
		// Missing (404), or not readable by us (403: someone else's, or a permission we lack):
		// the create call tells which, with an error code.
	case statusCode(err) == 0 || classOf(err) != nil:
		// No answer at all (the request failed before one), or one that says what it is.
		return s.bucketError(name, err)
	default:
		// 301 without a region, 400 or another status without a code: GetBucketLocation answers
		// with a body (and where the bucket is, if it can be read).
		return s.checkRegionAfter(ctx, name, region, err)
	}
	in := &s3.CreateBucketInput{Bucket: &name, ObjectLockEnabledForBucket: aws.Bool(objectLock)}
	if region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(region)}
	}
	if _, err := s.client.CreateBucket(ctx, in); err != nil {
		if errorCode(err) == "BucketAlreadyOwnedByYou" {
			return s.checkRegion(ctx, name, region)
		}
		err = s.bucketError(name, err)
		if errors.Is(err, objectstore.ErrOwnedByOther) {
			return fmt.Errorf("bucket name %q is taken by another account; nothing was changed: %w", name, err)
		}
		return fmt.Errorf("creating bucket %q in %q: %w", name, region, err)
	}
	return nil
}

func (s *management) checkRegion(ctx context.Context, name, want string) error {
	return s.checkRegionAfter(ctx, name, want, nil)
}

// checkRegionAfter compares the bucket's region with want. head is the HEAD answer without a code
// that made it look (nil after a successful HEAD): when GetBucketLocation fails too, its error,
// which has a code, is returned with the HEAD's status for context.
func (s *management) checkRegionAfter(ctx context.Context, name, want string, head error) error {
	out, err := s.client.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: &name})
	if err != nil {
		err = s.bucketError(name, err)
		if head != nil {
			return fmt.Errorf("bucket %q: HEAD answered %d without a reason, GetBucketLocation: %w", name, statusCode(head), err)
		}
		return err
	}
	region := string(out.LocationConstraint)
	switch region {
	case "":
		region = "us-east-1"
	case "EU":
		region = "eu-west-1"
	}
	if region != want {
		return s.wrongRegion(name, region, head)
	}
	// In the right region and readable (even if HEAD was refused without a reason): the
	// settings' calls that follow answer with codes if anything is wrong.
	return nil
}

// convergeImmutability keeps versioning and the Object Lock default retention as declared. A
// compliance retention can never be removed, weakened to governance or shortened: such a change
// is refused and nothing is touched.
//
// It reports whether Object Lock is on afterwards (as read, or as it was just enabled).
func (s *management) convergeImmutability(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig) (bool, error) {
	current, err := s.client.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &name})
	lockOn := err == nil && current.ObjectLockConfiguration != nil && current.ObjectLockConfiguration.ObjectLockEnabled == types.ObjectLockEnabledEnabled
	err = s.convergeRetention(ctx, name, cfg, current, err, lockOn)
	return lockOn || (err == nil && cfg.Immutability != nil), err
}

// convergeRetention is convergeImmutability after the lock configuration was read (current,
// readErr; lockOn: Object Lock is enabled).
func (s *management) convergeRetention(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig, current *s3.GetObjectLockConfigurationOutput, readErr error, lockOn bool) error {
	err := readErr
	if err != nil && errorCode(err) != "ObjectLockConfigurationNotFoundError" && statusCode(err) != http.StatusNotFound {
		if cfg.Immutability == nil && errors.Is(classify(err), objectstore.ErrUnsupported) {
			return nil // a store without Object Lock cannot hold a lock we would have to keep
		}
		return s.bucketError(name, err)
	}
	var curMode types.ObjectLockRetentionMode
	var curDays int32
	if lockOn && current.ObjectLockConfiguration.Rule != nil && current.ObjectLockConfiguration.Rule.DefaultRetention != nil {
		r := current.ObjectLockConfiguration.Rule.DefaultRetention
		curMode = r.Mode
		curDays = aws.ToInt32(r.Days) + 365*aws.ToInt32(r.Years)
	}

	im := cfg.Immutability
	if im == nil {
		if curMode == types.ObjectLockRetentionModeCompliance {
			return objectstore.Invalidf("bucket %q has a compliance retention of %d days, which can never be removed; declare it in providerConfig.immutability", name, curDays)
		}
		if curMode == "" {
			return nil
		}
		// A governance retention that is no longer declared is removed; the lock itself stays on.
		_, err := s.client.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: &name,
			ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}})
		return s.bucketError(name, err)
	}

	wantMode := types.ObjectLockRetentionModeGovernance
	if im.Mode == awsapi.ModeCompliance {
		wantMode = types.ObjectLockRetentionModeCompliance
	}
	wantDays := int32(im.RetentionPeriod.Duration / (24 * time.Hour))
	if curMode == types.ObjectLockRetentionModeCompliance && (wantMode != curMode || wantDays < curDays) {
		return objectstore.Invalidf("bucket %q has a compliance retention of %d days, which can never be weakened or shortened (declared: %s, %d days)", name, curDays, im.Mode, wantDays)
	}
	if _, err := s.client.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &name,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		return s.bucketError(name, err)
	}
	if curMode == wantMode && curDays == wantDays {
		return nil
	}
	_, err = s.client.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: &name,
		ObjectLockConfiguration: &types.ObjectLockConfiguration{
			ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule:              &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: wantMode, Days: aws.Int32(wantDays)}},
		}})
	if err != nil && !lockOn {
		return fmt.Errorf("enabling Object Lock on the existing bucket %q (some S3-compatible stores allow it only at creation): %w", name, s.bucketError(name, err))
	}
	return s.bucketError(name, err)
}

// convergeLifecycle keeps exactly this extension's rules: the multipart abort rule and the two
// bucket-wide deferral rules (see deferral.go), which touch only versions DeferDeletion tagged
// and delete markers with nothing behind them. Rules of the old per-entry form (ID
// gardener-backup-deferred-<prefix>, scoped by the entry's prefix alone) expired every version
// under the prefix, also the backups of an entry that uses the prefix again: they are dropped
// (see docs/aws.md for what that leaves). On a store that does not know lifecycle
// configurations, a bucket without Object Lock (so nothing can be locked and nothing deferred)
// and with the multipart rule switched off does without them.
//
// A bucket taken over from provider-aws keeps AdoptedRule (see takeover.go); with handBack the
// lifecycle is left in the incumbent's form instead.
func (s *management) convergeLifecycle(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig, lockOn bool) error {
	if cfg.HandBack {
		return s.handBackLifecycle(ctx, name, cfg)
	}
	err := s.updateLifecycle(ctx, name, func(rules []types.LifecycleRule) ([]types.LifecycleRule, error) {
		var want []types.LifecycleRule
		if adopted(rules) {
			want = append(want, adoptionRule())
		}
		if !cfg.Disabled(awsapi.SettingMultipartAbortLifecycle) {
			want = append(want, types.LifecycleRule{
				ID:                             aws.String(ruleAbortMultipart),
				Status:                         types.ExpirationStatusEnabled,
				Filter:                         &types.LifecycleRuleFilter{Prefix: aws.String("")},
				AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(abortMultipartDays)},
			})
		}
		return withDeferralRules(want), nil
	})
	if err != nil && !lockOn && cfg.Disabled(awsapi.SettingMultipartAbortLifecycle) && (unimplemented(err) || errorCode(err) == "InvalidArgument") {
		return nil
	}
	return err
}

// updateLifecycle reads the rules, lets change compute the new set and writes it (only when it
// differs), then re-reads to make sure a concurrent writer did not undo it; only then is change
// run again. S3 has no conditional lifecycle write: the design keeps the writers agreeing (every
// writer writes the same bucket-wide rules, no entry has a rule of its own; see deferral.go).
func (s *management) updateLifecycle(ctx context.Context, bucket string, change func([]types.LifecycleRule) ([]types.LifecycleRule, error)) error {
	var written []types.LifecycleRule
	for attempt := range 3 {
		current, err := s.lifecycleRules(ctx, bucket)
		if err != nil {
			return err
		}
		if attempt > 0 && sameRules(current, written) {
			return nil // written and still there
		}
		want, err := change(current)
		if err != nil {
			return err
		}
		switch {
		case sameRules(current, want):
			return nil // as wanted: a write would change nothing
		case len(want) == 0:
			_, err = s.client.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: &bucket})
		default:
			_, err = s.client.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: &bucket,
				LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: want}})
		}
		if err != nil {
			return s.bucketError(bucket, err)
		}
		written = want
	}
	return fmt.Errorf("bucket %q: the lifecycle rules kept changing under concurrent writers; retried next reconcile", bucket)
}

func (s *management) lifecycleRules(ctx context.Context, bucket string) ([]types.LifecycleRule, error) {
	out, err := s.client.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &bucket})
	if err != nil {
		if errorCode(err) == "NoSuchLifecycleConfiguration" {
			return nil, nil
		}
		return nil, s.bucketError(bucket, err)
	}
	return out.Rules, nil
}

// sameRules reports whether a and b hold the same rules by ID, each with the same meaning (see
// ruleMismatch). A rule of b without an ID (the incumbent's abort rule, to which the store gives
// an ID of its own) matches a rule of a with any ID and the same meaning.
func sameRules(a, b []types.LifecycleRule) bool {
	if len(a) != len(b) {
		return false
	}
	for _, want := range b {
		i := slices.IndexFunc(a, func(r types.LifecycleRule) bool {
			if aws.ToString(want.ID) == "" {
				return ruleMismatch(&r, want) == ""
			}
			return aws.ToString(r.ID) == aws.ToString(want.ID)
		})
		if i < 0 || ruleMismatch(&a[i], want) != "" {
			return false
		}
	}
	return true
}

// DeleteBucket implements objectstore.Management.
func (s *management) DeleteBucket(ctx context.Context, name string) error {
	if err := awsapi.ValidateBucketName(name); err != nil {
		return err
	}
	_, err := s.client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &name})
	err = s.bucketError(name, err)
	if errors.Is(err, objectstore.ErrBucketNotFound) {
		return nil
	}
	return err
}
