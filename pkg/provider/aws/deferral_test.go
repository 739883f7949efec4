// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
)

// versionScope is one stored version (not a delete marker) with its tags, and the rules of ours
// whose scope takes it in.
type versionScope struct {
	Key, Version string
	Current      bool
	Tags         map[string]string
	Rules        []string
}

// deferralScope reads the bucket's lifecycle and, for every version under prefix, its tags, and
// tells which enabled expiring rules of this extension (IDs gardener-backup-deferred*: the old
// per-prefix rules and the bucket-wide one) take it in, as S3 matches a filter: the key starts
// with the rule's prefix and the version carries every tag the rule names.
func deferralScope(ctx context.Context, bucket, prefix string) ([]versionScope, error) {
	raw := minio.S3Client()
	var rules []types.LifecycleRule
	lc, err := raw.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &bucket})
	if err == nil {
		rules = lc.Rules
	} else if !strings.Contains(err.Error(), "NoSuchLifecycleConfiguration") {
		return nil, err
	}
	out, err := raw.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: &prefix})
	if err != nil {
		return nil, err
	}
	var scopes []versionScope
	for _, v := range out.Versions {
		tagging, err := raw.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &bucket, Key: v.Key, VersionId: v.VersionId})
		if err != nil {
			return nil, err
		}
		vs := versionScope{Key: aws.ToString(v.Key), Version: aws.ToString(v.VersionId), Current: aws.ToBool(v.IsLatest), Tags: map[string]string{}}
		for _, t := range tagging.TagSet {
			vs.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
		for _, r := range rules {
			if ruleTakesIn(r, vs) {
				vs.Rules = append(vs.Rules, aws.ToString(r.ID))
			}
		}
		scopes = append(scopes, vs)
	}
	return scopes, nil
}

func ruleTakesIn(r types.LifecycleRule, v versionScope) bool {
	expires := (r.Expiration != nil && aws.ToInt32(r.Expiration.Days) > 0) || r.NoncurrentVersionExpiration != nil
	if !strings.HasPrefix(aws.ToString(r.ID), "gardener-backup-deferred") || r.Status != types.ExpirationStatusEnabled || !expires {
		return false
	}
	prefix := aws.ToString(r.Prefix) //nolint:staticcheck // the deprecated top-level prefix still scopes a rule
	var tags []types.Tag
	if f := r.Filter; f != nil {
		prefix += aws.ToString(f.Prefix)
		if f.Tag != nil {
			tags = append(tags, *f.Tag)
		}
		if f.And != nil {
			prefix += aws.ToString(f.And.Prefix)
			tags = append(tags, f.And.Tags...)
		}
	}
	if !strings.HasPrefix(v.Key, prefix) {
		return false
	}
	for _, t := range tags {
		if got, ok := v.Tags[aws.ToString(t.Key)]; !ok || got != aws.ToString(t.Value) {
			return false
		}
	}
	return true
}

// deferralCovers is the conformance harness's read-back: every version under prefix is taken in
// by a rule of ours.
func deferralCovers(ctx context.Context, bucket, prefix string) error {
	scopes, err := deferralScope(ctx, bucket, prefix)
	if err != nil {
		return err
	}
	if len(scopes) == 0 {
		return fmt.Errorf("no versions under %q", prefix)
	}
	for _, v := range scopes {
		if len(v.Rules) == 0 {
			return fmt.Errorf("version %s of %q (tags %v) is in scope of no deferral rule", v.Version, v.Key, v.Tags)
		}
	}
	return nil
}

// lockedEntry makes an Object Lock bucket (governance, a day) holding three versions under the
// entry's prefix and one beside it, deletes the prefix (all three are locked) and returns the
// bucket's name and the prefix.
func lockedEntry(t *testing.T, store conformance.Stores) (string, objectstore.Prefix) {
	t.Helper()
	ctx := context.Background()
	name := newBucketName()
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeGovernance, 1)); err != nil {
		t.Fatal(err)
	}
	if err := conformance.PutMany(ctx, newStore(t, minio.SecretData()), name, []string{"shoot--a--b--1/a", "shoot--a--b--1/b", "shoot--a--b--1/c", "shoot--a--b--10/keep"}); err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, store, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Locked != 3 || res.Deleted != 0 {
		t.Fatalf("got %+v, %v; want the 3 locked versions counted, none deleted", res, err)
	}
	return name, prefix
}

func TestObjectLockedObjectsAreReportedAndDeferred(t *testing.T) {
	ctx := context.Background()
	store, raw := newStore(t, minio.SecretData()), minio.S3Client()
	before := time.Now()
	name, prefix := lockedEntry(t, store)
	lock, err := raw.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &name})
	if err != nil || lock.ObjectLockConfiguration.Rule.DefaultRetention.Mode != types.ObjectLockRetentionModeGovernance || aws.ToInt32(lock.ObjectLockConfiguration.Rule.DefaultRetention.Days) != 1 {
		t.Fatalf("object lock not converged: %+v, %v", lock, err)
	}
	// The listing tells each version's retention from the bucket's default: a day after its write.
	err = store.ListObjects(ctx, name, "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			if o.Modified.IsZero() || !o.RetainUntil.Equal(o.Modified.AddDate(0, 0, 1)) || o.RetainUntil.Sub(before) < 23*time.Hour {
				t.Errorf("%q listed with write time %v and retention until %v; want a day after the write", o.Key, o.Modified, o.RetainUntil)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.DeferDeletion(ctx, name, prefix.String()); err != nil {
		t.Fatal(err)
	}
	if err := deferralCovers(ctx, name, prefix.String()); err != nil {
		t.Fatal(err)
	}
	// A reconcile keeps the bucket's rules as they are: nothing dropped, nothing duplicated.
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeGovernance, 1)); err != nil {
		t.Fatal(err)
	}
	lc, err := raw.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &name})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(lc.Rules))
	for _, r := range lc.Rules {
		ids = append(ids, aws.ToString(r.ID))
	}
	slices.Sort(ids)
	if want := []string{awsprovider.DeferredDeletionRule, awsprovider.ExpiredDeleteMarkersRule}; !slices.Equal(ids, want) {
		t.Fatalf("rules after a reconcile %v; want %v", ids, want)
	}
	if err := deferralCovers(ctx, name, prefix.String()); err != nil {
		t.Fatalf("after a reconcile: %v", err)
	}
	// Outside the prefix nothing is marked.
	if scopes, err := deferralScope(ctx, name, "shoot--a--b--10/"); err != nil || len(scopes) != 1 || len(scopes[0].Rules) != 0 {
		t.Fatalf("the neighbour's version: %+v, %v; want it in scope of no rule", scopes, err)
	}
}

// TestDeferralTouchesOnlyWhatItMarked: a shoot migrated from A to B and back to A writes under
// the same prefix X/ in A's bucket again, after X's deferral there. Its new snapshots (new keys,
// and new versions of old keys) must be outside every rule of ours, while what was deferred
// stays in scope, also after the bucket's reconcile.
func TestDeferralTouchesOnlyWhatItMarked(t *testing.T) {
	ctx := context.Background()
	store := newStore(t, minio.SecretData())
	name, prefix := lockedEntry(t, store)
	if _, err := store.DeferDeletion(ctx, name, prefix.String()); err != nil {
		t.Fatal(err)
	}
	deferred, err := deferralScope(ctx, name, prefix.String())
	if err != nil {
		t.Fatal(err)
	}
	// X is back: etcd-backup-restore writes new snapshots under X/, one of them over an old key.
	if err := conformance.PutMany(ctx, store, name, []string{"shoot--a--b--1/new-full", "shoot--a--b--1/new-incr", "shoot--a--b--1/a"}); err != nil {
		t.Fatal(err)
	}
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeGovernance, 1)); err != nil {
		t.Fatal(err)
	}
	after, err := deferralScope(ctx, name, prefix.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(deferred)+3 {
		t.Fatalf("%d versions under %q; want the %d deferred and 3 new", len(after), prefix, len(deferred))
	}
	for _, v := range after {
		wasDeferred := slices.ContainsFunc(deferred, func(d versionScope) bool { return d.Key == v.Key && d.Version == v.Version })
		switch {
		case wasDeferred && len(v.Rules) == 0:
			t.Errorf("deferred version %s of %q fell out of every rule", v.Version, v.Key)
		case !wasDeferred && len(v.Rules) > 0:
			t.Errorf("new version %s of %q (a live entry's backup) is in scope of the rules %v; a deferral must take in only what it marked", v.Version, v.Key, v.Rules)
		}
	}
}

// TestOldPerPrefixRulesAreDropped: a rule of the old form (the whole prefix, no tag) is the
// dangerous one; the bucket's reconcile removes it.
func TestOldPerPrefixRulesAreDropped(t *testing.T) {
	ctx := context.Background()
	raw, name := minio.S3Client(), newBucketName()
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeGovernance, 1)); err != nil {
		t.Fatal(err)
	}
	old := types.LifecycleRule{ID: aws.String("gardener-backup-deferred-shoot--a--b--1/"), Status: types.ExpirationStatusEnabled,
		Filter:     &types.LifecycleRuleFilter{Prefix: aws.String("shoot--a--b--1/")},
		Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}, NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(1)}}
	if _, err := raw.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: &name,
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{old}}}); err != nil {
		t.Fatal(err)
	}
	if err := conformance.PutMany(ctx, newStore(t, minio.SecretData()), name, []string{"shoot--a--b--1/live"}); err != nil {
		t.Fatal(err)
	}
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeGovernance, 1)); err != nil {
		t.Fatal(err)
	}
	if scopes, err := deferralScope(ctx, name, "shoot--a--b--1/"); err != nil || len(scopes) != 1 || len(scopes[0].Rules) != 0 {
		t.Fatalf("after a reconcile: %+v, %v; want the live object in scope of no rule", scopes, err)
	}
}

// TestDeferralWithGeneratedCredentials: a source- entry on the destination seed has only its
// own credentials, the bucket's generated ones: they tag and read the bucket's rules back, and
// the deferral completes. Where the rules are missing, they may not write them, and say what to do.
func TestDeferralWithGeneratedCredentials(t *testing.T) {
	ctx := context.Background()
	cfg := minioIssuerConfig()
	cfg.Immutability = immutable(awsapi.ModeGovernance, 1).Immutability
	name := newBucketName()
	if err := ensure(t, minio.SecretData(), name, cfg); err != nil {
		t.Fatal(err)
	}
	cred, err := newIssuer(t, &awsprovider.Provider{}, minio.SecretData(), cfg, awsapi.IssuerMinIO).IssueCredential(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	generated := newStore(t, cred.Data)
	if err := conformance.PutMany(ctx, generated, name, []string{"shoot--a--b--1/a", "shoot--a--b--1/b"}); err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, generated, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Locked != 2 {
		t.Fatalf("DeletePrefix with generated credentials = %+v, %v; want 2 locked", res, err)
	}
	if _, err := generated.DeferDeletion(ctx, name, prefix.String()); err != nil {
		t.Fatalf("DeferDeletion with the bucket's generated credentials = %v; want it done", err)
	}
	if err := deferralCovers(ctx, name, prefix.String()); err != nil {
		t.Fatal(err)
	}

	// The rules are gone (a bucket not reconciled since): the generated credentials may not put
	// them there, and the answer says who does.
	if _, err := minio.S3Client().DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: &name}); err != nil {
		t.Fatal(err)
	}
	_, err = generated.DeferDeletion(ctx, name, prefix.String())
	var missing *objectstore.RuleMissingError
	if !errors.As(err, &missing) || !errors.Is(err, objectstore.ErrForbidden) || !strings.Contains(err.Error(), "reconcile the BackupBucket") {
		t.Fatalf("DeferDeletion without the rules, with generated credentials = %v; want a RuleMissingError (ErrForbidden) saying to reconcile the BackupBucket", err)
	}
}
