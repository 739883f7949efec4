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
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Lifecycle rule IDs this extension owns (see ownRule). Rules with other IDs are somebody else's
// and are kept.
const (
	ruleAbortMultipart = "gardener-backup-abort-incomplete-multipart"
	ruleDeferredPrefix = "gardener-backup-deferred-"
	// abortMultipartDays is how long an incomplete multipart upload may linger.
	abortMultipartDays = 7
)

// EnsureBucket implements objectstore.Management: create the bucket if needed, then converge this
// extension's part of every setting of the store's config on every call (see converge), so that
// drift of it is corrected and what others set is kept.
func (s *management) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	name, region, err := s.bucketAndRegion(b)
	if err != nil {
		return err
	}
	if _, err := s.ensureExists(ctx, name, region, s.cfg.Immutability != nil, true); err != nil {
		return err
	}
	_, err = s.converge(ctx, name, s.cfg, true)
	return err
}

// bucketAndRegion validates the bucket's name and returns the region it must be in (the
// secret's override, if any).
func (s *management) bucketAndRegion(b objectstore.Bucket) (string, string, error) {
	if err := awsapi.ValidateBucketName(b.Name); err != nil {
		return "", "", err
	}
	if s.regionOverride != "" {
		return b.Name, s.regionOverride, nil
	}
	return b.Name, b.Region, nil
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

// ensureExists creates the bucket in the store's region (only with create; without, it reports
// the bucket missing), or checks that the existing one is ours and in that region. A HEAD answer
// has no body and so no error code: it is never passed on as it is, but read for the region S3
// names (X-Amz-Bucket-Region), or asked again with a call that answers with a body.
func (s *management) ensureExists(ctx context.Context, name, region string, objectLock, create bool) (missing bool, err error) {
	_, err = s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &name})
	switch {
	case err == nil:
		return false, s.checkRegion(ctx, name, region)
	case s.regionMismatch(name, err) != nil:
		return false, s.regionMismatch(name, err)
	case !create && statusCode(err) == http.StatusNotFound:
		return true, nil
	case !create && statusCode(err) == http.StatusForbidden:
		return false, fmt.Errorf("bucket %q cannot be read with these credentials (another account's bucket, or a permission missing; only creating it would tell which): %w", name, s.bucketError(name, err))
	case statusCode(err) == http.StatusNotFound, statusCode(err) == http.StatusForbidden:
		// Missing (404), or not readable by us (403: someone else's, or a permission we lack):
		// the create call tells which, with an error code.
	case statusCode(err) == 0 || classOf(err) != nil:
		// No answer at all (the request failed before one), or one that says what it is.
		return false, s.bucketError(name, err)
	default:
		// 301 without a region, 400 or another status without a code: GetBucketLocation answers
		// with a body (and where the bucket is, if it can be read).
		return false, s.checkRegionAfter(ctx, name, region, err)
	}
	return false, s.create(ctx, name, region, objectLock)
}

// create creates the bucket, or checks the region of the one of ours that a concurrent create
// made.
func (s *management) create(ctx context.Context, name, region string, objectLock bool) error {
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

// planImmutability keeps versioning and the Object Lock default retention as declared, keeping
// the stricter setting: a retention longer than declared, or one not declared, is kept (and
// named in the plan with objectstore.ChangeKeep), never shortened or removed, whoever set it. A
// compliance retention can never be weakened to governance either: such a declaration is refused
// and nothing is touched. It sets lockOn: whether Object Lock is on afterwards (as
// read, or as the changes turn it on).
func (s *management) planImmutability(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig, lockOn *bool) ([]pending, error) {
	current, err := s.client.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &name})
	on := err == nil && current.ObjectLockConfiguration != nil && current.ObjectLockConfiguration.ObjectLockEnabled == types.ObjectLockEnabledEnabled
	changes, err := s.planRetention(ctx, name, cfg, current, err, on)
	*lockOn = on || (err == nil && cfg.Immutability != nil)
	return changes, err
}

// planRetention is planImmutability after the lock configuration was read (current, readErr;
// lockOn: Object Lock is enabled).
func (s *management) planRetention(ctx context.Context, name string, cfg *awsapi.BackupBucketConfig, current *s3.GetObjectLockConfigurationOutput, readErr error, lockOn bool) ([]pending, error) {
	err := readErr
	if err != nil && errorCode(err) != "ObjectLockConfigurationNotFoundError" && statusCode(err) != http.StatusNotFound {
		if cfg.Immutability == nil && errors.Is(classify(err), objectstore.ErrUnsupported) {
			return nil, nil // a store without Object Lock cannot hold a lock we would have to keep
		}
		return nil, s.bucketError(name, err)
	}
	var curMode types.ObjectLockRetentionMode
	var curDays int32
	if lockOn && current.ObjectLockConfiguration.Rule != nil && current.ObjectLockConfiguration.Rule.DefaultRetention != nil {
		r := current.ObjectLockConfiguration.Rule.DefaultRetention
		curMode = r.Mode
		curDays = aws.ToInt32(r.Days) + 365*aws.ToInt32(r.Years)
	}
	const retention = "Object Lock default retention"

	im := cfg.Immutability
	if im == nil {
		if curMode == types.ObjectLockRetentionModeCompliance {
			return nil, objectstore.Invalidf("bucket %q has a compliance retention of %d days, which can never be removed; declare it in providerConfig.immutability", name, curDays)
		}
		if curMode == "" {
			return nil, nil
		}
		// A governance retention is stricter than none: kept, whoever set it.
		return []pending{keptRetention(fmt.Sprintf("governance, %d days, kept (none declared): a retention is never removed; remove it on the bucket if it is to go", curDays))}, nil
	}

	wantMode := types.ObjectLockRetentionModeGovernance
	if im.Mode == awsapi.ModeCompliance {
		wantMode = types.ObjectLockRetentionModeCompliance
	}
	wantDays := int32(im.RetentionPeriod.Duration / (24 * time.Hour))
	if curMode == types.ObjectLockRetentionModeCompliance && (wantMode != curMode || wantDays < curDays) {
		return nil, objectstore.Invalidf("bucket %q has a compliance retention of %d days, which can never be weakened or shortened (declared: %s, %d days)", name, curDays, im.Mode, wantDays)
	}
	declaredDays := wantDays
	if curMode != "" && curDays > wantDays {
		// The stricter setting is kept: a longer retention someone set is never shortened.
		wantDays = curDays
	}
	var changes []pending
	// A versioning read that fails (credentials allowed to write it but not to read it) falls
	// through to the write, whose answer is the one that counts.
	if v, err := s.client.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: &name}); err != nil || v.Status != types.BucketVersioningStatusEnabled {
		was := "not readable"
		if err == nil {
			was = string(v.Status)
			if was == "" {
				was = "never enabled"
			}
		}
		changes = append(changes, pending{
			change: objectstore.BucketChange{Setting: "versioning", Action: objectstore.ChangeUpdate, Detail: was + " -> Enabled"},
			apply: func(ctx context.Context) error {
				_, err := s.client.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &name,
					VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}})
				return s.bucketError(name, err)
			},
		})
	}
	if curMode == wantMode && curDays == wantDays {
		if wantDays > declaredDays {
			changes = append(changes, keptRetention(fmt.Sprintf("%s, %d days, kept (declared: %d days): a longer retention is never shortened", strings.ToLower(string(curMode)), curDays, declaredDays)))
		}
		return changes, nil
	}
	action, was := objectstore.ChangeUpdate, fmt.Sprintf("%s, %d days", strings.ToLower(string(curMode)), curDays)
	if curMode == "" {
		action, was = objectstore.ChangeCreate, "none"
		if !lockOn {
			was = "Object Lock off"
		}
	}
	return append(changes, pending{
		change: objectstore.BucketChange{Setting: retention, Action: action, Detail: fmt.Sprintf("%s -> %s, %d days%s", was, strings.ToLower(string(wantMode)), wantDays, longerKept(wantDays, declaredDays))},
		apply: func(ctx context.Context) error {
			_, err := s.client.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: &name,
				ObjectLockConfiguration: &types.ObjectLockConfiguration{
					ObjectLockEnabled: types.ObjectLockEnabledEnabled,
					Rule:              &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: wantMode, Days: aws.Int32(wantDays)}},
				}})
			if err != nil && !lockOn {
				return fmt.Errorf("enabling Object Lock on the existing bucket %q (some S3-compatible stores allow it only at creation): %w", name, s.bucketError(name, err))
			}
			return s.bucketError(name, err)
		},
	}), nil
}

// keptRetention is the plan's note of a default retention kept as it is, stricter than declared.
func keptRetention(detail string) pending {
	return pending{change: objectstore.BucketChange{Setting: "Object Lock default retention", Action: objectstore.ChangeKeep, Detail: detail},
		apply: func(context.Context) error { return nil }}
}

// longerKept notes, in a change's detail, a period longer than declared that was kept.
func longerKept(days, declared int32) string {
	if days > declared {
		return fmt.Sprintf(" (declared: %d days; the longer existing period is kept)", declared)
	}
	return ""
}

// updateLifecycle reads the rules, lets change compute the new set and writes it (only when it
// differs), then re-reads to make sure a concurrent writer did not undo it; only then is change
// run again. S3 has no conditional lifecycle write: the design keeps the writers agreeing (every
// writer writes the same bucket-wide rules, no entry has a rule of its own; see deferralRules).
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
