// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// The incumbent is gardener-extension-provider-aws v1.73.0; its artifacts are made here with the
// same calls its code makes (file:line at that tag). The test module test/incumbent/aws runs its
// real code through a proxy that also takes the two calls MinIO lacks (public access block, the
// abort rule); MinIO alone does not, so those two are left out here.

// incumbentBucket creates the bucket as the incumbent's BackupBucket reconcile does with an
// immutability of a day (governance): pkg/aws/client/client.go:366-405 (CreateBucket, private
// ACL, LocationConstraint, Object Lock at creation, SSE AES256) and :424-467 (its TLS policy,
// which MinIO refuses for its s3:TlsVersion condition: logged), then
// actuator_reconcile.go:59-74,122 (UpdateObjectLockConfiguration, client.go:550-570). Left out,
// as MinIO does not implement them: the public access block (:408-418) and the abort rule
// (:469-490); test/integration/incumbent runs all of them through test/stack/aws.S3Gaps.
func incumbentBucket(t *testing.T, raw *s3.Client, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := raw.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name, ACL: types.BucketCannedACLPrivate, ObjectLockEnabledForBucket: aws.Bool(true),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "eu-central-1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: &name, ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{
		Rules: []types.ServerSideEncryptionRule{{ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: "AES256"}}}}}); err != nil {
		t.Logf("default encryption (MinIO without KMS refuses it): %v", err)
	}
	policy, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{{
		"Effect": "Deny", "Principal": "*", "Action": "s3:*",
		"Resource":  []string{"arn:aws:s3:::" + name, "arn:aws:s3:::" + name + "/*"},
		"Condition": map[string]any{"Bool": map[string]string{"aws:SecureTransport": "false"}, "NumericLessThan": map[string]string{"s3:TlsVersion": "1.2"}},
	}}})
	if _, err := raw.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: &name, Policy: aws.String(string(policy))}); err != nil {
		t.Logf("the incumbent's bucket policy (MinIO may not know s3:TlsVersion): %v", err)
	}
	if _, err := raw.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: &name, ObjectLockConfiguration: &types.ObjectLockConfiguration{
		ObjectLockEnabled: types.ObjectLockEnabledEnabled,
		Rule:              &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Days: aws.Int32(1), Mode: types.ObjectLockRetentionModeGovernance}}}}); err != nil {
		t.Fatal(err)
	}
}

// incumbentDeletesEntry is the incumbent's entry deletion in a versioned bucket
// (client.go:2849-3005): delete every version and delete marker under the prefix (quietly: the
// locked ones stay), tag what is left gc-marked-for-deletion=true (the whole tag set replaced,
// :3008-3031), then replace the whole lifecycle with its rules (without the abort rule here).
func incumbentDeletesEntry(t *testing.T, raw *s3.Client, bucket, prefix string) {
	t.Helper()
	ctx := context.Background()
	out, err := raw.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: &prefix})
	if err != nil {
		t.Fatal(err)
	}
	var ids []types.ObjectIdentifier
	for _, v := range out.Versions {
		ids = append(ids, types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
	}
	if len(ids) > 0 {
		if _, err := raw.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &bucket, Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}}); err != nil {
			t.Fatal(err)
		}
	}
	if out, err = raw.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: &prefix}); err != nil {
		t.Fatal(err)
	}
	for _, v := range out.Versions {
		if _, err := raw.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &bucket, Key: v.Key, VersionId: v.VersionId,
			Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String(awsprovider.IncumbentDeferralTag), Value: aws.String("true")}}}}); err != nil {
			t.Fatal(err)
		}
	}
	putRules(t, raw, bucket, incumbentRules())
}

// incumbentRules are GC-forTaggedObjects and GC-delete-markers-objects as client.go:2961-2987 writes them.
func incumbentRules() []types.LifecycleRule {
	return []types.LifecycleRule{
		{ID: aws.String("GC-forTaggedObjects"), Status: types.ExpirationStatusEnabled,
			Filter:     &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("gc-marked-for-deletion"), Value: aws.String("true")}},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}, NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(1)}},
		{ID: aws.String("GC-delete-markers-objects"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")},
			Expiration: &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)}},
	}
}

func putRules(t *testing.T, raw *s3.Client, bucket string, rules []types.LifecycleRule) {
	t.Helper()
	if _, err := raw.PutBucketLifecycleConfiguration(context.Background(), &s3.PutBucketLifecycleConfigurationInput{Bucket: &bucket,
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: rules}}); err != nil {
		t.Fatal(err)
	}
}

// storedVersion is a version with its tags and the IDs of the enabled expiring rules whose scope
// (prefix and tags, as S3 matches them) takes it in, whoever wrote them.
type storedVersion struct {
	Key, Version string
	Tags         map[string]string
	CoveredBy    []string
}

func storedVersions(t *testing.T, raw *s3.Client, bucket string) ([]storedVersion, []string) {
	t.Helper()
	ctx := context.Background()
	var rules []types.LifecycleRule
	if lc, err := raw.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &bucket}); err == nil {
		rules = lc.Rules
	}
	var ids []string
	for _, r := range rules {
		ids = append(ids, aws.ToString(r.ID))
	}
	slices.Sort(ids)
	out, err := raw.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	var vs []storedVersion
	for _, v := range out.Versions {
		tg, err := raw.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &bucket, Key: v.Key, VersionId: v.VersionId})
		if err != nil {
			t.Fatal(err)
		}
		s := storedVersion{Key: aws.ToString(v.Key), Version: aws.ToString(v.VersionId), Tags: map[string]string{}}
		for _, tag := range tg.TagSet {
			s.Tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
		for _, r := range rules {
			expires := (r.Expiration != nil && aws.ToInt32(r.Expiration.Days) > 0) || r.NoncurrentVersionExpiration != nil
			if r.Status != types.ExpirationStatusEnabled || !expires || r.Filter == nil {
				continue
			}
			if r.Filter.Tag != nil && s.Tags[aws.ToString(r.Filter.Tag.Key)] == aws.ToString(r.Filter.Tag.Value) && strings.HasPrefix(s.Key, aws.ToString(r.Filter.Prefix)) {
				s.CoveredBy = append(s.CoveredBy, aws.ToString(r.ID))
			}
		}
		vs = append(vs, s)
	}
	return vs, ids
}

// incumbentLandscape makes the incumbent's bucket with three entries' snapshots and deletes the
// first entry the incumbent's way (all locked: deferred with its tag and rule).
func incumbentLandscape(t *testing.T) (raw *s3.Client, name string) {
	t.Helper()
	raw, name = minio.S3Client(), newBucketName()
	incumbentBucket(t, raw, name)
	for _, k := range []string{"shoot--p--gone/v1/Full-0", "shoot--p--gone/v1/Incr-1", "shoot--p--live/v1/Full-0", "shoot--p--live/v1/Incr-1", "shoot--p--other/v1/Full-0"} {
		if _, err := raw.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &name, Key: aws.String(k), Body: strings.NewReader("snapshot " + k)}); err != nil {
			t.Fatal(err)
		}
	}
	incumbentDeletesEntry(t, raw, name, "shoot--p--gone/")
	return raw, name
}

// TestTakeoverKeepsTheIncumbentsDeferralAndEveryVersion: the first reconcile of this extension
// adopts the incumbent's bucket (AdoptedRule recorded), keeps a rule over the versions the
// incumbent deferred, converges the rest and neither removes nor re-creates anything; a second
// reconcile keeps the record. Then this extension deletes the deferred entry again: its
// deferral marks for both rules and is verified.
func TestTakeoverKeepsTheIncumbentsDeferralAndEveryVersion(t *testing.T) {
	ctx := context.Background()
	raw, name := incumbentLandscape(t)
	before, _ := storedVersions(t, raw, name)
	cfg := immutable(awsapi.ModeGovernance, 1)
	for pass := range 2 {
		if err := ensure(t, minio.SecretData(), name, cfg); err != nil {
			t.Fatalf("reconcile %d: %v", pass, err)
		}
		after, rules := storedVersions(t, raw, name)
		if !slices.Contains(rules, awsprovider.AdoptedRule) {
			t.Fatalf("reconcile %d: rules %v; want %s, the record of the adoption", pass, rules, awsprovider.AdoptedRule)
		}
		if len(after) != len(before) {
			t.Fatalf("reconcile %d: %d versions; want all %d kept", pass, len(after), len(before))
		}
		for _, v := range after {
			gone := strings.HasPrefix(v.Key, "shoot--p--gone/")
			if gone && !slices.Contains(v.CoveredBy, awsprovider.AdoptedRule) {
				t.Errorf("reconcile %d: %s %s deferred by the incumbent is in scope of %v; want %s", pass, v.Key, v.Version, v.CoveredBy, awsprovider.AdoptedRule)
			}
			if !gone && len(v.CoveredBy) > 0 {
				t.Errorf("reconcile %d: live snapshot %s is in scope of %v", pass, v.Key, v.CoveredBy)
			}
		}
	}
	store := newStoreWith(t, &awsprovider.Provider{}, minio.SecretData(), cfg)
	prefix, _ := objectstore.EntryPrefix("shoot--p--gone")
	res, err := objectstore.DeletePrefix(ctx, store, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Locked != 2 {
		t.Fatalf("deleting the entry the incumbent deferred: %+v, %v; want Done with 2 locked", res, err)
	}
	d, err := store.DeferDeletion(ctx, name, prefix.String())
	if err != nil || !strings.Contains(d.Rule, awsprovider.DeferredDeletionRule) {
		t.Fatalf("deferral: %+v, %v", d, err)
	}
	after, _ := storedVersions(t, raw, name)
	for _, v := range after {
		if strings.HasPrefix(v.Key, "shoot--p--gone/") && (v.Tags[awsprovider.DeferredDeletionTag] != "true" || v.Tags[awsprovider.IncumbentDeferralTag] != "true") {
			t.Errorf("%s %s carries %v; want both deferral tags (ours, and the incumbent's for a hand-back)", v.Key, v.Version, v.Tags)
		}
	}
}

// TestHandBackLeavesTheIncumbentsForm: handBack writes the incumbent's rules in its form and no
// rule of ours; every version this extension deferred is in their scope (its deferral marked it
// with the incumbent's tag too), and the incumbent's next entry deletion, which replaces the whole
// lifecycle, keeps every deferred version in scope. A deferral made while handBack is set relies
// on the incumbent's rule and does not bring ours back.
func TestHandBackLeavesTheIncumbentsForm(t *testing.T) {
	ctx := context.Background()
	raw, name := incumbentLandscape(t)
	cfg := immutable(awsapi.ModeGovernance, 1)
	if err := ensure(t, minio.SecretData(), name, cfg); err != nil {
		t.Fatal(err)
	}
	store := newStoreWith(t, &awsprovider.Provider{}, minio.SecretData(), cfg)
	prefix, _ := objectstore.EntryPrefix("shoot--p--other")
	if res, err := objectstore.DeletePrefix(ctx, store, name, prefix, objectstore.DeleteOptions{}); err != nil || !res.Done {
		t.Fatalf("%+v, %v", res, err)
	}
	if _, err := store.DeferDeletion(ctx, name, prefix.String()); err != nil {
		t.Fatal(err)
	}
	before, _ := storedVersions(t, raw, name)

	back := immutable(awsapi.ModeGovernance, 1)
	back.HandBack = true
	if err := ensure(t, minio.SecretData(), name, back); err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{awsprovider.IncumbentDeleteMarkersRule, awsprovider.IncumbentDeferralRule}
	check := func(stage string) {
		t.Helper()
		after, rules := storedVersions(t, raw, name)
		if !slices.Equal(rules, wantIDs) {
			t.Fatalf("%s: rules %v; want exactly the incumbent's %v", stage, rules, wantIDs)
		}
		if len(after) < len(before) {
			t.Fatalf("%s: %d versions; want all %d kept", stage, len(after), len(before))
		}
		for _, v := range after {
			deferred := !strings.HasPrefix(v.Key, "shoot--p--live/")
			if deferred != slices.Contains(v.CoveredBy, awsprovider.IncumbentDeferralRule) {
				t.Errorf("%s: %s %s (tags %v) in scope of %v", stage, v.Key, v.Version, v.Tags, v.CoveredBy)
			}
		}
	}
	check("after the hand-back")
	if err := ensure(t, minio.SecretData(), name, back); err != nil {
		t.Fatalf("a second hand-back pass: %v", err)
	}
	handing := newStoreWith(t, &awsprovider.Provider{}, minio.SecretData(), back)
	live, _ := objectstore.EntryPrefix("shoot--p--live")
	if res, err := objectstore.DeletePrefix(ctx, handing, name, live, objectstore.DeleteOptions{}); err != nil || !res.Done {
		t.Fatalf("%+v, %v", res, err)
	}
	d, err := handing.DeferDeletion(ctx, name, live.String())
	if err != nil || !strings.Contains(d.Rule, awsprovider.IncumbentDeferralRule) {
		t.Fatalf("deferral while handing back: %+v, %v; want it to rely on %s", d, err, awsprovider.IncumbentDeferralRule)
	}
	// The incumbent takes over again and deletes an entry: its whole lifecycle replaces ours.
	incumbentDeletesEntry(t, raw, name, "shoot--p--nothing/")
	after, rules := storedVersions(t, raw, name)
	if !slices.Equal(rules, wantIDs) {
		t.Fatalf("rules %v", rules)
	}
	for _, v := range after {
		if !slices.Contains(v.CoveredBy, awsprovider.IncumbentDeferralRule) {
			t.Errorf("after the incumbent's rewrite: %s %s (tags %v) is in scope of no rule", v.Key, v.Version, v.Tags)
		}
	}
}

// TestHandBackCostsNoObjectRequests: a hand-back costs what it writes, not the bucket: on a
// bucket of ours with live snapshots and a deferred entry, it sends lifecycle requests only (no
// listing, no per-version tag read or write), however many versions the bucket holds, and the
// deferred versions are in scope of the incumbent's rule all the same (marked at the deferral).
// Until issue 36, a hand-back read the tags of every version of the bucket at every attempt.
func TestHandBackCostsNoObjectRequests(t *testing.T) {
	ctx := context.Background()
	raw, name := minio.S3Client(), newBucketName()
	cfg := immutable(awsapi.ModeGovernance, 1)
	if err := ensure(t, minio.SecretData(), name, cfg); err != nil {
		t.Fatal(err)
	}
	store := newStoreWith(t, &awsprovider.Provider{}, minio.SecretData(), cfg)
	var keys []string
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("shoot--p--live/etcd-main/v2/Incr-%04d", i))
	}
	keys = append(keys, "shoot--p--gone/etcd-main/v2/Full-0", "shoot--p--gone/etcd-main/v2/Incr-1")
	if err := conformance.PutMany(ctx, store, name, keys); err != nil {
		t.Fatal(err)
	}
	gone, _ := objectstore.EntryPrefix("shoot--p--gone")
	if res, err := objectstore.DeletePrefix(ctx, store, name, gone, objectstore.DeleteOptions{}); err != nil || !res.Done || res.Locked != 2 {
		t.Fatalf("%+v, %v; want Done with 2 locked", res, err)
	}
	if _, err := store.DeferDeletion(ctx, name, gone.String()); err != nil {
		t.Fatal(err)
	}

	proxy, err := stack.StartCountingProxy(minio.Endpoint, s3Operation)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	back := immutable(awsapi.ModeGovernance, 1)
	back.HandBack = true
	for pass := range 2 {
		proxy.Reset()
		if err := ensure(t, withData(minio.SecretData(), "endpoint", proxy.URL), name, back); err != nil {
			t.Fatalf("hand-back pass %d: %v", pass, err)
		}
		counts := proxy.Counts()
		for op, n := range counts {
			if strings.Contains(op, "ObjectTagging") || strings.HasPrefix(op, "List") {
				t.Errorf("hand-back pass %d sent %d %s; want none (requests: %v)", pass, n, op, counts)
			}
		}
	}
	after, rules := storedVersions(t, raw, name)
	if want := []string{awsprovider.IncumbentDeleteMarkersRule, awsprovider.IncumbentDeferralRule}; !slices.Equal(rules, want) {
		t.Fatalf("rules %v; want exactly the incumbent's %v", rules, want)
	}
	for _, v := range after {
		deferred := strings.HasPrefix(v.Key, gone.String())
		if deferred != slices.Contains(v.CoveredBy, awsprovider.IncumbentDeferralRule) {
			t.Errorf("%s %s (tags %v) in scope of %v", v.Key, v.Version, v.Tags, v.CoveredBy)
		}
	}
}

// TestLookAlikeOfAnotherAccountIsNotAdopted: a bucket of the name in another account, even one
// with the incumbent's rules, is somebody else's: ErrOwnedByOther, and nothing is written to it.
func TestLookAlikeOfAnotherAccountIsNotAdopted(t *testing.T) {
	proxy, err := stack.StartProxy(minio.Endpoint, stack.ProxyOptions{ForeignPrefix: "foreign-"})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	name := "foreign-" + newBucketName()
	incumbentBucket(t, minio.S3Client(), name) // exists in MinIO; the proxy plays another account
	putRules(t, minio.S3Client(), name, incumbentRules())
	for _, handBack := range []bool{false, true} {
		cfg := immutable(awsapi.ModeGovernance, 1)
		cfg.HandBack = handBack
		err := ensure(t, withoutRegion(withData(minio.SecretData(), "endpoint", proxy.URL)), name, cfg)
		if !errors.Is(err, objectstore.ErrOwnedByOther) {
			t.Fatalf("handBack %v: %v; want ErrOwnedByOther", handBack, err)
		}
	}
	if n := proxy.ForeignWrites.Load(); n != 0 {
		t.Fatalf("%d writes reached the other account's bucket", n)
	}
	_, rules := storedVersions(t, minio.S3Client(), name)
	if fmt.Sprint(rules) != "[GC-delete-markers-objects GC-forTaggedObjects]" {
		t.Fatalf("the look-alike's rules changed: %v", rules)
	}
}
