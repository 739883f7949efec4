// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

// incumbentLifecycle is gardener-extension-provider-gcp v1.54.1's lifecycle
// (pkg/controller/backupbucket/actuator.go L111-127, and L191-204 what its reconcile compares).
var incumbentLifecycle = storage.Lifecycle{Rules: []storage.LifecycleRule{{
	Action:    storage.LifecycleAction{Type: storage.DeleteAction},
	Condition: storage.LifecycleCondition{DaysSinceCustomTime: 1},
}}}

// incumbentBucket creates a bucket exactly as provider-gcp v1.54.1's createBucket does
// (pkg/controller/backupbucket/actuator.go L100-142: the BackupBucket's name, its region,
// uniform bucket-level access, soft delete off, its one lifecycle rule, the retention policy of
// providerConfig.immutability; no labels), with the operator's client c.
func incumbentBucket(t *testing.T, c *storage.Client, name string, retention time.Duration) {
	t.Helper()
	attrs := &storage.BucketAttrs{
		Name:                     name,
		Location:                 region,
		UniformBucketLevelAccess: storage.UniformBucketLevelAccess{Enabled: true},
		SoftDeletePolicy:         &storage.SoftDeletePolicy{RetentionDuration: 0},
		Lifecycle:                incumbentLifecycle,
	}
	if retention > 0 {
		attrs.RetentionPolicy = &storage.RetentionPolicy{RetentionPeriod: retention}
	}
	if err := c.Bucket(name).Create(ctxFor(t), gcs.ProjectID, attrs); err != nil {
		t.Fatal(err)
	}
}

// incumbentDefers is provider-gcp v1.54.1's entry deletion (pkg/gcp/client/storage.go L104-156):
// every live object under prefix is deleted; one its retention holds gets the custom time now,
// unless it has one.
func incumbentDefers(t *testing.T, c *storage.Client, bucket, prefix string) {
	t.Helper()
	ctx := ctxFor(t)
	for _, k := range liveKeys(t, c, bucket, prefix) {
		o := c.Bucket(bucket).Object(k)
		err := o.Delete(ctx)
		if err == nil {
			continue
		}
		if !strings.Contains(err.Error(), "retentionPolicyNotMet") && !strings.Contains(err.Error(), "retention policy") {
			t.Fatalf("incumbent's delete of %s: %v", k, err)
		}
		if _, err := o.Update(ctx, storage.ObjectAttrsToUpdate{CustomTime: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
	}
}

func liveKeys(t *testing.T, c *storage.Client, bucket, prefix string) []string {
	t.Helper()
	var out []string
	for _, g := range generations(t, c, bucket, prefix) {
		out = append(out, strings.SplitN(g, "#", 2)[0])
	}
	return slices.Compact(out)
}

// incumbentUpdateRequired is provider-gcp v1.54.1's isUpdateRequired for the lifecycle
// (pkg/controller/backupbucket/actuator.go L191-204): true when its reconcile would rewrite it.
func incumbentUpdateRequired(t *testing.T, c *storage.Client, bucket string) bool {
	t.Helper()
	attrs, err := c.Bucket(bucket).Attrs(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	return !reflect.DeepEqual(incumbentLifecycle, attrs.Lifecycle)
}

const entryC = "shoot--a--b--2/" // the entry provider-gcp deferred before the takeover

// TestTakeoverAndHandBack (issue 26, gcp): provider-gcp's bucket with its entries and a deferral
// of its own is adopted and converged without losing an object; the incumbent's deferred entry is
// deleted by this extension's path; the etcd-backup data stay the same; with handBack the
// lifecycle is left in provider-gcp's form, which its reconcile leaves alone, and what this
// extension deferred is deleted by provider-gcp's rule.
func TestTakeoverAndHandBack(t *testing.T) {
	ctx := ctxFor(t)
	data := gcs.SecretData()
	s, c := newStore(t, data), rawClient(t, data)
	name := newBucketName()
	incumbentBucket(t, c, name, 24*time.Hour)
	for _, k := range []string{entryA + "etcd-main/v2/Full-1", entryA + "etcd-main/v2/Incr-2", entryB + "etcd-main/v2/Full-1", entryC + "etcd-main/v2/Full-1", entryC + "etcd-main/v2/Incr-2"} {
		if err := s.PutObject(ctx, name, k, []byte("data of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	incumbentDefers(t, c, name, entryC)
	before := generations(t, c, name, "")

	// etcd-backup: provider-gcp's is the entry secret's data plus bucketName (gardener's
	// genericactuator, extensions/pkg/controller/backupentry/genericactuator/actuator.go L92, and
	// provider-gcp's GetETCDSecretData returns it unchanged for a key: backupentry/actuator.go
	// L40-45, L62-64); this extension's must hold the same values.
	entrySecret := maps.Clone(data)
	incumbentEtcd := maps.Clone(entrySecret)
	incumbentEtcd[gcpprovider.KeyBucketName] = []byte(name)
	withBucket := maps.Clone(entrySecret)
	withBucket[gcpprovider.KeyBucketName] = []byte(name)
	ours, err := testProvider.EtcdBackupSecretData(&extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--a--b--1"}}, withBucket)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(ours, incumbentEtcd, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatalf("etcd-backup data differ across the takeover: keys %v, provider-gcp's %v", slices.Sorted(maps.Keys(ours)), slices.Sorted(maps.Keys(incumbentEtcd)))
	}

	// The takeover: the BackupBucket's reconcile with the same providerConfig.
	cfg := immutable(24*time.Hour, false)
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatalf("EnsureBucket on provider-gcp's bucket: %v", err)
	}
	labels := field(t, name, "labels")
	if labels[gcpapi.ManagedLabel] != gcpapi.ManagedLabelValue || labels[gcpprovider.AdoptedLabel] != gcpprovider.AdoptedFromProviderGCP {
		t.Fatalf("labels after the takeover %v; want %s=%s and %s=%s", labels, gcpapi.ManagedLabel, gcpapi.ManagedLabelValue, gcpprovider.AdoptedLabel, gcpprovider.AdoptedFromProviderGCP)
	}
	if got := rules(t, name); !slices.Equal(got, ownRules) {
		t.Fatalf("lifecycle after the takeover %v; want %v", got, ownRules)
	}
	if got := generations(t, c, name, ""); !slices.Equal(got, before) {
		t.Fatalf("the takeover changed the objects: %v; want %v", got, before)
	}
	// A second reconcile: ours now, nothing to change.
	patchesBefore := patches(name)
	if err := ensure(t, s, name, cfg); err != nil {
		t.Fatal(err)
	}
	if n := patches(name) - patchesBefore; n != 0 {
		rs := gcs.Requests("/storage/v1/b/" + name)
		t.Fatalf("second reconcile made %d updates; want none: %s", n, rs[len(rs)-1].Body)
	}

	// The entry provider-gcp deferred, deleted again by this extension: its objects are locked,
	// carry provider-gcp's marks and are handed to the bucket's rule, read back.
	prefixC, _ := objectstore.EntryPrefix(strings.TrimSuffix(entryC, "/"))
	if res, err := objectstore.DeletePrefix(ctx, s, name, prefixC, objectstore.DeleteOptions{}); err != nil || !res.Done || res.Locked != 2 {
		t.Fatalf("DeletePrefix(C) = %+v, %v; want done with 2 locked", res, err)
	}
	if _, err := s.DeferDeletion(ctx, name, entryC); err != nil {
		t.Fatal(err)
	}
	if err := deferralCovers(c)(ctx, name, entryC); err != nil {
		t.Fatal(err)
	}

	// This extension defers entry A, then hands back.
	prefixA, _ := objectstore.EntryPrefix(strings.TrimSuffix(entryA, "/"))
	if res, err := objectstore.DeletePrefix(ctx, s, name, prefixA, objectstore.DeleteOptions{}); err != nil || !res.Done || res.Locked != 2 {
		t.Fatalf("DeletePrefix(A) = %+v, %v", res, err)
	}
	if _, err := s.DeferDeletion(ctx, name, entryA); err != nil {
		t.Fatal(err)
	}
	back := immutable(24*time.Hour, false)
	back.HandBack = true
	if err := ensureFinal(t, s, name, back); err != nil {
		t.Fatalf("EnsureBucket with handBack: %v", err)
	}
	if incumbentUpdateRequired(t, c, name) {
		t.Fatalf("after the hand-back provider-gcp would rewrite the lifecycle %v", rules(t, name))
	}
	// provider-gcp's rule runs: what either deferred goes once the retention is over, entry B
	// (live) stays.
	if _, err := gcs.RunLifecycle(name, time.Now().Add(49*time.Hour)); err != nil {
		t.Fatal(err)
	}
	left := generations(t, c, name, "")
	if len(left) != 1 || !strings.HasPrefix(left[0], entryB) {
		t.Fatalf("after provider-gcp's rule ran: %v; want entry B's object alone", left)
	}
}

// TestHandBackWaitsWhileANoncurrentRuleIsNeeded: a noncurrent rule that still covers
// generations the store did not mark would be dropped by provider-gcp; the hand-back waits
// (objectstore.HandBackWaitError, by itself: no configuration error) and the lifecycle stays.
func TestHandBackWaitsWhileANoncurrentRuleIsNeeded(t *testing.T) {
	s, _, name := lockedEntries(t)
	if _, err := deferA(t, s, name); err != nil {
		t.Fatal(err)
	}
	before := rules(t, name)
	back := immutable(24*time.Hour, false)
	back.HandBack = true
	err := ensure(t, s, name, back)
	var wait *objectstore.HandBackWaitError
	if !errors.As(err, &wait) || wait.ByOperator || errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "finishes by itself") {
		t.Fatalf("EnsureBucket with handBack = %v; want a HandBackWaitError (by itself, no configuration error) saying what it waits for", err)
	}
	// The rest converges to the hand-back's form, but the noncurrent rule the generations need stays.
	got, kept := rules(t, name), 0
	for _, r := range before {
		if strings.Contains(r, "noncurrentTimeBefore") {
			if !slices.Contains(got, r) {
				t.Fatalf("a waiting hand-back dropped the rule %s: %v", r, got)
			}
			kept++
		}
	}
	if kept == 0 {
		t.Fatalf("no noncurrent rule before the hand-back: %v", before)
	}
	// The rules it keeps are this extension's: so are the labels, until the hand-back completes.
	if l := field(t, name, "labels"); l[gcpapi.ManagedLabel] != gcpapi.ManagedLabelValue {
		t.Fatalf("labels while the hand-back waits: %v; want %s=%s kept", l, gcpapi.ManagedLabel, gcpapi.ManagedLabelValue)
	}
}

// TestLookAlikeBucketIsNotAdopted: a bucket of the BackupBucket's name in the project that is
// neither this extension's nor in provider-gcp's form (another lifecycle; somebody else's
// managed-by label) is refused as somebody else's and left untouched.
func TestLookAlikeBucketIsNotAdopted(t *testing.T) {
	c := rawClient(t, gcs.SecretData())
	s := newStore(t, gcs.SecretData())
	for name, attrs := range map[string]*storage.BucketAttrs{
		"another lifecycle": {Location: region, UniformBucketLevelAccess: storage.UniformBucketLevelAccess{Enabled: true},
			Lifecycle: storage.Lifecycle{Rules: []storage.LifecycleRule{incumbentLifecycle.Rules[0], {Action: storage.LifecycleAction{Type: storage.DeleteAction}, Condition: storage.LifecycleCondition{AgeInDays: 30}}}}},
		"somebody's label": {Location: region, UniformBucketLevelAccess: storage.UniformBucketLevelAccess{Enabled: true},
			Lifecycle: incumbentLifecycle, Labels: map[string]string{gcpapi.ManagedLabel: "terraform"}},
	} {
		t.Run(name, func(t *testing.T) {
			bucket := newBucketName()
			if err := c.Bucket(bucket).Create(ctxFor(t), gcs.ProjectID, attrs); err != nil {
				t.Fatal(err)
			}
			lc, labels, updates := rules(t, bucket), field(t, bucket, "labels"), patches(bucket)
			err := ensure(t, s, bucket, nil)
			if !errors.Is(err, objectstore.ErrOwnedByOther) || !strings.Contains(err.Error(), "left untouched") {
				t.Fatalf("EnsureBucket on a look-alike = %v; want ErrOwnedByOther", err)
			}
			if !slices.Equal(rules(t, bucket), lc) || !reflect.DeepEqual(field(t, bucket, "labels"), labels) || patches(bucket) != updates {
				t.Fatal("the look-alike bucket was changed")
			}
			// With handBack (a hand-back finished looks like this: no label of ours), whatever
			// the answer, nothing is written either.
			_ = ensure(t, s, bucket, &gcpapi.BackupBucketConfig{HandBack: true})
			if !slices.Equal(rules(t, bucket), lc) || !reflect.DeepEqual(field(t, bucket, "labels"), labels) || patches(bucket) != updates {
				t.Fatal("the look-alike bucket was changed by a reconcile with handBack")
			}
		})
	}
}
