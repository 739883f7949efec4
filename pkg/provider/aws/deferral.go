// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Deferred deletion on S3.
//
// A deferral touches only the object versions it marked: DeferDeletion tags every version under
// the entry's prefix with DeferredDeletionTag=true (PutObjectTagging with the version's ID, which
// Object Lock allows), and one bucket-wide lifecycle rule, scoped by that tag alone, expires the
// tagged versions once their locks allow. A version written later under the same prefix (the
// prefix in use again after a shoot migrated away and back) carries no tag and is outside every
// rule of ours. A second bucket-wide rule removes expired object delete markers (those with no
// version left behind them, hiding nothing), so that what the expiry leaves does not linger.
//
// Both rules belong to the bucket: EnsureBucket (the BackupBucket's reconcile, with the
// operator's credentials) puts them in place and keeps them, and no entry ever writes a rule of
// its own, so concurrent entries cannot drop each other's rules. DeferDeletion only reads the
// rules back (and writes them itself only when they are missing and its credentials may: a
// bucket not reconciled since this design). Generated credentials may tag object versions and read
// the lifecycle (see bucketPolicy), so an entry completes its deferral with its own credentials,
// also on a seed that has no BackupBucket of its bucket (the source- entry of a migration).
const (
	// DeferredDeletionRule is the lifecycle rule that deletes the tagged versions.
	DeferredDeletionRule = "gardener-backup-deferred-deletion"
	// DeferredDeletionTag is the object tag (value "true") DeferDeletion marks versions with.
	DeferredDeletionTag = "gardener-backup-delete"
	// ExpiredDeleteMarkersRule removes delete markers that no version is left behind.
	ExpiredDeleteMarkersRule = "gardener-backup-expired-delete-markers"
	// deferredDays is how long after a tagged version was written (current) or became noncurrent
	// it expires; S3 deletes a locked version only once its lock allows.
	deferredDays = 1
	// tagParallelism is how many versions are tagged at once.
	tagParallelism = 16
)

// deferralRules are the two bucket-wide rules, as EnsureBucket writes them.
func deferralRules() []types.LifecycleRule {
	return []types.LifecycleRule{
		{
			ID:                          aws.String(DeferredDeletionRule),
			Status:                      types.ExpirationStatusEnabled,
			Filter:                      &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String(DeferredDeletionTag), Value: aws.String("true")}},
			Expiration:                  &types.LifecycleExpiration{Days: aws.Int32(deferredDays)},
			NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(deferredDays)},
		},
		{
			ID:         aws.String(ExpiredDeleteMarkersRule),
			Status:     types.ExpirationStatusEnabled,
			Filter:     &types.LifecycleRuleFilter{Prefix: aws.String("")},
			Expiration: &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)},
		},
	}
}

// ruleMismatch says how a rule read back differs from want (enabled, the same scope and nothing
// wider, the same actions and no other: no transition, no expiration date), or "" when it matches. Stores give a rule back in their own form (an
// empty prefix as a missing one, a tag alone or inside And): only the meaning is compared.
func ruleMismatch(got *types.LifecycleRule, want types.LifecycleRule) string {
	switch {
	case got == nil:
		return "it is missing"
	case got.Status != types.ExpirationStatusEnabled:
		return "it is disabled"
	}
	gotPrefix, gotTags := ruleScope(*got)
	wantPrefix, wantTags := ruleScope(want)
	if gotPrefix != wantPrefix || !slices.Equal(gotTags, wantTags) || sizeFiltered(got.Filter) != sizeFiltered(want.Filter) {
		return fmt.Sprintf("its scope is prefix %q, tags %v; want prefix %q, tags %v", gotPrefix, gotTags, wantPrefix, wantTags)
	}
	days := func(e *types.LifecycleExpiration) (int32, bool) {
		if e == nil {
			return 0, false
		}
		return aws.ToInt32(e.Days), aws.ToBool(e.ExpiredObjectDeleteMarker)
	}
	gd, gm := days(got.Expiration)
	wd, wm := days(want.Expiration)
	if gd != wd || gm != wm {
		return "its expiration differs"
	}
	nc := func(n *types.NoncurrentVersionExpiration) int32 {
		if n == nil {
			return 0
		}
		return aws.ToInt32(n.NoncurrentDays)
	}
	if nc(got.NoncurrentVersionExpiration) != nc(want.NoncurrentVersionExpiration) {
		return "its noncurrent version expiration differs"
	}
	abort := func(a *types.AbortIncompleteMultipartUpload) int32 {
		if a == nil {
			return 0
		}
		return aws.ToInt32(a.DaysAfterInitiation)
	}
	if abort(got.AbortIncompleteMultipartUpload) != abort(want.AbortIncompleteMultipartUpload) {
		return "its abort of incomplete multipart uploads differs"
	}
	// Actions the rules of this extension and of provider-aws never have: a rule with one is
	// somebody else's, whatever else it shares with ours.
	if expirationDate(got.Expiration) != expirationDate(want.Expiration) {
		return "its expiration date differs"
	}
	newer := func(n *types.NoncurrentVersionExpiration) int32 {
		if n == nil {
			return 0
		}
		return aws.ToInt32(n.NewerNoncurrentVersions)
	}
	if newer(got.NoncurrentVersionExpiration) != newer(want.NoncurrentVersionExpiration) {
		return "its number of newer noncurrent versions kept differs"
	}
	if transitions(*got) != transitions(want) {
		return "its transitions differ"
	}
	return ""
}

// expirationDate is the date an expiration action names, "" for none.
func expirationDate(e *types.LifecycleExpiration) string {
	if e == nil || e.Date == nil {
		return ""
	}
	return e.Date.UTC().Format("2006-01-02")
}

// transitions says what storage class transitions a rule makes, "" for none.
func transitions(r types.LifecycleRule) string {
	var out []string
	for _, t := range r.Transitions {
		date := ""
		if t.Date != nil {
			date = t.Date.UTC().Format("2006-01-02")
		}
		out = append(out, fmt.Sprintf("current to %s after %d days or on %q", t.StorageClass, aws.ToInt32(t.Days), date))
	}
	for _, t := range r.NoncurrentVersionTransitions {
		out = append(out, fmt.Sprintf("noncurrent to %s after %d days keeping %d", t.StorageClass, aws.ToInt32(t.NoncurrentDays), aws.ToInt32(t.NewerNoncurrentVersions)))
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// sizeFiltered reports whether a filter also scopes by object size (a store may give an unset
// size back as 0).
func sizeFiltered(f *types.LifecycleRuleFilter) bool {
	if f == nil {
		return false
	}
	if f.And != nil && (aws.ToInt64(f.And.ObjectSizeGreaterThan) > 0 || aws.ToInt64(f.And.ObjectSizeLessThan) > 0) {
		return true
	}
	return aws.ToInt64(f.ObjectSizeGreaterThan) > 0 || aws.ToInt64(f.ObjectSizeLessThan) > 0
}

// ruleScope returns the key prefix and the sorted "key=value" tags a rule is scoped by.
func ruleScope(r types.LifecycleRule) (string, []string) {
	prefix := aws.ToString(r.Prefix) //nolint:staticcheck // the deprecated top-level prefix still scopes a rule
	var tags []string
	if f := r.Filter; f != nil {
		if f.Prefix != nil {
			prefix = *f.Prefix
		}
		if f.Tag != nil {
			tags = append(tags, aws.ToString(f.Tag.Key)+"="+aws.ToString(f.Tag.Value))
		}
		if f.And != nil {
			prefix += aws.ToString(f.And.Prefix)
			for _, t := range f.And.Tags {
				tags = append(tags, aws.ToString(t.Key)+"="+aws.ToString(t.Value))
			}
		}
	}
	slices.Sort(tags)
	return prefix, tags
}

// rulesMismatch checks the deferral rules in rules; "" when both are in place as written.
func rulesMismatch(rules []types.LifecycleRule) string {
	return rulesMismatchWith(rules, deferralRules())
}

// rulesMismatchWith checks that every rule of wanted is in rules as written; "" when they are.
func rulesMismatchWith(rules, wanted []types.LifecycleRule) string {
	for _, want := range wanted {
		var got *types.LifecycleRule
		if i := slices.IndexFunc(rules, func(r types.LifecycleRule) bool { return aws.ToString(r.ID) == aws.ToString(want.ID) }); i >= 0 {
			got = &rules[i]
		}
		if why := ruleMismatch(got, want); why != "" {
			return fmt.Sprintf("lifecycle rule %s: %s", aws.ToString(want.ID), why)
		}
	}
	return ""
}

// oldDeferralRulePrefix starts the IDs of the per-entry rules of earlier versions
// (gardener-backup-deferred-<prefix>, scoped to the prefix alone: they expired new backups under
// a prefix in use again). DeferredDeletionRule starts with it too; no entry prefix is "deletion".
const oldDeferralRulePrefix = "gardener-backup-deferred-"

// withDeferralRules returns rules with the deferral rules in place and without the per-entry
// rules of earlier versions; the others are kept as they are.
func withDeferralRules(rules []types.LifecycleRule) []types.LifecycleRule {
	out := slices.DeleteFunc(slices.Clone(rules), func(r types.LifecycleRule) bool {
		id := aws.ToString(r.ID)
		return strings.HasPrefix(id, oldDeferralRulePrefix) || id == ExpiredDeleteMarkersRule
	})
	return append(out, deferralRules()...)
}

// DeferDeletion implements objectstore.Management: it checks that the bucket's deferral rules are in
// place (writing them only where they are missing and these credentials may), tags every
// version under prefix (delete markers cannot carry tags; the rule for expired delete markers
// removes them once their versions are gone), then reads the rules back once more: only then is
// the deferral reported. A version already tagged is skipped, so an interrupted deferral resumes.
func (s *management) DeferDeletion(ctx context.Context, bucket, prefix string) (objectstore.Deferral, error) {
	if err := awsapi.ValidateBucketName(bucket); err != nil {
		return objectstore.Deferral{}, err
	}
	if err := s.ensureDeferralRules(ctx, bucket); err != nil {
		return objectstore.Deferral{}, err
	}
	if err := s.tagForDeferral(ctx, bucket, prefix); err != nil {
		return objectstore.Deferral{}, err
	}
	// Read back after tagging: a concurrent writer (an older version of this extension) may have
	// dropped them meanwhile.
	rules, err := s.lifecycleRules(ctx, bucket)
	if err != nil {
		return objectstore.Deferral{}, err
	}
	if why := rulesMismatchWith(rules, s.requiredDeferralRules()); why != "" {
		return objectstore.Deferral{}, fmt.Errorf("%w: bucket %q: %s after tagging the versions under %q; retried", objectstore.ErrThrottled, bucket, why, prefix)
	}
	rule, tag := DeferredDeletionRule, DeferredDeletionTag
	if s.cfg.HandBack {
		rule, tag = IncumbentDeferralRule, IncumbentDeferralTag
	}
	return objectstore.Deferral{Rule: fmt.Sprintf("lifecycle rule %s (scoped to the object tag %s=true, which the versions under %q carry)", rule, tag, prefix)}, nil
}

// ensureDeferralRules reads the bucket's lifecycle and, when the deferral rules are not in place
// as written, adds them (keeping every other rule) and reads them back.
func (s *management) ensureDeferralRules(ctx context.Context, bucket string) error {
	rules, err := s.lifecycleRules(ctx, bucket)
	if err != nil {
		return fmt.Errorf("reading the lifecycle of bucket %q: %w", bucket, err)
	}
	why := rulesMismatchWith(rules, s.requiredDeferralRules())
	if why == "" {
		return nil
	}
	err = s.updateLifecycle(ctx, bucket, func(current []types.LifecycleRule) ([]types.LifecycleRule, error) {
		if s.cfg.HandBack {
			return desiredLifecycle(current, s.cfg), nil
		}
		return withDeferralRules(current), nil
	})
	if errors.Is(err, objectstore.ErrForbidden) {
		return &objectstore.RuleMissingError{Bucket: bucket, Why: why, Cause: err}
	}
	if err != nil {
		return err
	}
	if rules, err = s.lifecycleRules(ctx, bucket); err != nil {
		return err
	}
	if why := rulesMismatchWith(rules, s.requiredDeferralRules()); why != "" {
		return fmt.Errorf("%w: bucket %q acknowledged its deferral rules but reads back with %s; the store does not keep them", objectstore.ErrUnsupported, bucket, why)
	}
	return nil
}

// tagForDeferral tags every version under prefix (not delete markers, which carry no tags)
// with DeferredDeletionTag, keeping the version's other tags.
func (s *management) tagForDeferral(ctx context.Context, bucket, prefix string) error {
	pages := s3.NewListObjectVersionsPaginator(s.client, &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: &prefix, MaxKeys: s.maxKeys()})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return s.bucketError(bucket, err)
		}
		versions := make([]objectstore.ObjectVersion, 0, len(out.Versions))
		for _, v := range out.Versions {
			versions = append(versions, objectstore.ObjectVersion{Key: aws.ToString(v.Key), Version: aws.ToString(v.VersionId)})
		}
		failed := objectstore.ForEachObject(ctx, versions, tagParallelism, func(ctx context.Context, o objectstore.ObjectVersion) error {
			return s.tagVersion(ctx, bucket, o)
		})
		if len(failed) > 0 {
			return fmt.Errorf("tagging %d object versions for deferred deletion, first %q %s: %w", len(failed), failed[0].Object.Key, failed[0].Object.Version, failed[0].Err)
		}
	}
	return nil
}

// deferralTags are the tags a deferred version carries: ours, and the incumbent's, so that its
// rule deletes the version after a hand-back to provider-aws without the hand-back looking for
// it (see IncumbentDeferralTag). A version counts as deferred only with both.
var deferralTags = []string{DeferredDeletionTag, IncumbentDeferralTag}

// tagVersion adds the deferral tags to one version; a version that is gone needs none.
func (s *management) tagVersion(ctx context.Context, bucket string, o objectstore.ObjectVersion) error {
	var version *string
	if o.Version != "" && o.Version != "null" {
		version = aws.String(o.Version)
	}
	got, err := s.client.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &bucket, Key: aws.String(o.Key), VersionId: version})
	if err != nil {
		if skippable(err) {
			return nil
		}
		return s.bucketError(bucket, err)
	}
	tags := got.TagSet
	if !slices.ContainsFunc(deferralTags, func(k string) bool { return !hasTag(tags, k) }) {
		return nil // marked already
	}
	tags = slices.DeleteFunc(slices.Clone(tags), func(t types.Tag) bool { return slices.Contains(deferralTags, aws.ToString(t.Key)) })
	for _, k := range deferralTags {
		tags = append(tags, types.Tag{Key: aws.String(k), Value: aws.String("true")})
	}
	_, err = s.client.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &bucket, Key: aws.String(o.Key), VersionId: version, Tagging: &types.Tagging{TagSet: tags}})
	if err != nil && !skippable(err) {
		return s.bucketError(bucket, err)
	}
	return nil
}

// skippable is an answer about a version that has nothing to tag: gone meanwhile (NoSuchKey,
// NoSuchVersion). Delete markers are never asked (only versions are listed for tagging); any
// other refusal, an API the store does not know among them, fails the deferral: an untagged
// version would be outside the rule while the deferral is reported.
func skippable(err error) bool {
	switch errorCode(err) {
	case "NoSuchKey", "NoSuchVersion":
		return true
	}
	return false
}
