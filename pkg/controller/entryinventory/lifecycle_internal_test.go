// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinventory

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// counted brings the fixture's entry to a fresh verdict from one snapshot in "bucket".
func (f *inventoryFixture) counted() {
	f.t.Helper()
	f.toFirstCount()
	f.snapshot("Full", f.clock.Now())
	if cond, ps, _ := f.reconcile(entryName); cond == nil || cond.Status != gardencorev1beta1.ConditionTrue || ps.Inventory == nil {
		f.t.Fatalf("first inventory: %+v, %+v", cond, ps.Inventory)
	}
	if backupsFresh(f.t) != 1 || testutil.CollectAndCount(metrics.EntryObjects) == 0 {
		f.t.Fatal("no metrics after the first inventory")
	}
}

// snapshotIn writes a snapshot of the entry into bucket.
func (f *inventoryFixture) snapshotIn(bucket, kind string, t time.Time) {
	f.t.Helper()
	key := fmt.Sprintf("%s/etcd-main/v2/%s-%08d-%08d-%d", entryName, kind, 1, 2, t.Unix())
	if err := f.store.PutObject(context.Background(), bucket, key, []byte("snapshot")); err != nil {
		f.t.Fatal(err)
	}
}

func (f *inventoryFixture) entry() *extensionsv1alpha1.BackupEntry {
	f.t.Helper()
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Name: entryName}, be); err != nil {
		f.t.Fatal(err)
	}
	return be
}

func (f *inventoryFixture) update(edit func(*extensionsv1alpha1.BackupEntry)) {
	f.t.Helper()
	be := f.entry()
	edit(be)
	if err := f.client.Update(context.Background(), be); err != nil {
		f.t.Fatal(err)
	}
}

// latestSnapshotSeries is how many gardener_backup_entry_latest_snapshot series the entry has.
func latestSnapshotSeries() int {
	return testutil.CollectAndCount(metrics.LatestSnapshot)
}

// TestAChangedBucketDropsTheOldVerdictAtOnce (finding 8): after spec.bucketName or spec.region
// changes, the next look counts the new place at once, well before the interval is over, and
// never publishes the old bucket's verdict, inventory or metrics for it.
func TestAChangedBucketDropsTheOldVerdictAtOnce(t *testing.T) {
	cases := []struct {
		name string
		// move changes the entry's place; newBucket is the bucket it names then.
		move       func(*extensionsv1alpha1.BackupEntry)
		newBucket  string
		snapshot   bool // the new place holds a fresh snapshot (the old one's, for the same bucket)
		failing    bool // the new place's listing fails
		wantStatus gardencorev1beta1.ConditionStatus
		wantReason string
	}{
		{name: "bucket with fresh snapshots", move: func(be *extensionsv1alpha1.BackupEntry) { be.Spec.BucketName = "bucket-b" },
			newBucket: "bucket-b", snapshot: true, wantStatus: gardencorev1beta1.ConditionTrue, wantReason: "Fresh"},
		{name: "empty bucket", move: func(be *extensionsv1alpha1.BackupEntry) { be.Spec.BucketName = "bucket-b" },
			newBucket: "bucket-b", wantStatus: gardencorev1beta1.ConditionUnknown, wantReason: "NoSnapshotYet"},
		{name: "bucket that cannot be listed", move: func(be *extensionsv1alpha1.BackupEntry) { be.Spec.BucketName = "bucket-b" },
			newBucket: "bucket-b", failing: true, wantStatus: gardencorev1beta1.ConditionUnknown, wantReason: ReasonRecounting},
		{name: "region", move: func(be *extensionsv1alpha1.BackupEntry) { be.Spec.Region = "eu-2" },
			newBucket: "bucket", snapshot: true, wantStatus: gardencorev1beta1.ConditionTrue, wantReason: "Fresh"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newInventoryFixture(t, entryName, cluster(false))
			f.counted()
			// A day later the entry, fresh in "bucket", is older than a full snapshot may be: a
			// new bucket without snapshots must not be judged by the entry's age.
			f.clock.Step(26 * time.Hour)
			f.snapshot("Full", f.clock.Now())
			old, _, _ := f.reconcile(entryName)
			if old.Status != gardencorev1beta1.ConditionTrue {
				t.Fatalf("before the move: %+v", old)
			}
			if tc.newBucket != "bucket" {
				if err := f.store.EnsureBucket(ctx, objectstore.Bucket{Name: tc.newBucket}); err != nil {
					t.Fatal(err)
				}
				if tc.snapshot {
					f.snapshotIn(tc.newBucket, "Full", f.clock.Now())
				}
			}
			f.store.fail.Store(tc.failing)
			f.update(tc.move)

			// Well before the next inventory is due.
			f.clock.Step(time.Minute)
			listings := f.store.listings.Load()
			cond, ps, requeue := f.reconcile(entryName)
			if f.store.listings.Load() != listings+1 {
				t.Errorf("the new place was not counted at once (%d listings, had %d)", f.store.listings.Load(), listings)
			}
			if cond == nil || cond.Status != tc.wantStatus || cond.Reason != tc.wantReason {
				t.Fatalf("after the move: %+v, want %s/%s", cond, tc.wantStatus, tc.wantReason)
			}
			be := f.entry()
			if tc.failing {
				if ps.Inventory != nil {
					t.Errorf("the old bucket's inventory is still published: %+v", ps.Inventory)
				}
				if !strings.Contains(cond.Message, "listing refused") || !strings.Contains(cond.Message, `"bucket-b"`) {
					t.Errorf("message %q does not say which bucket failed and why", cond.Message)
				}
				if testutil.CollectAndCount(metrics.BackupsFresh) != 0 || testutil.CollectAndCount(metrics.EntryObjects) != 0 || latestSnapshotSeries() != 0 {
					t.Error("the old bucket's metrics are still served")
				}
				if requeue != minRecount {
					t.Errorf("requeue after %s, want %s", requeue, minRecount)
				}
				// The listing works again a minute later: counted at once, not at the entry's
				// slot of a first count.
				f.store.fail.Store(false)
				f.clock.Step(requeue)
				listings = f.store.listings.Load()
				cond, ps, _ = f.reconcile(entryName)
				if f.store.listings.Load() != listings+1 || ps.Inventory == nil || ps.Inventory.Bucket != "bucket-b" {
					t.Fatalf("not recounted after the failure: %d listings (had %d), %+v", f.store.listings.Load(), listings, ps.Inventory)
				}
				if cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != "NoSnapshotYet" {
					t.Errorf("after the recount: %+v", cond)
				}
				return
			}
			if ps.Inventory == nil || ps.Inventory.Bucket != be.Spec.BucketName || ps.Inventory.Region != be.Spec.Region {
				t.Fatalf("the inventory does not record the place counted: %+v (spec %s/%s)", ps.Inventory, be.Spec.BucketName, be.Spec.Region)
			}
			if !tc.snapshot {
				if ps.Inventory.Objects != 0 || len(ps.Inventory.Etcds) != 0 || latestSnapshotSeries() != 0 {
					t.Errorf("the old bucket's snapshots survive the move: %+v, %d series", ps.Inventory, latestSnapshotSeries())
				}
				if testutil.CollectAndCount(metrics.BackupsFresh) != 0 {
					t.Error("entry_backups_fresh set while Unknown")
				}
			}
			if tc.wantStatus == old.Status && tc.wantReason == old.Reason && ps.Inventory.CountedAt.Time.Before(f.clock.Now()) {
				t.Errorf("the verdict was not renewed: %+v", cond)
			}
		})
	}
}

// TestADeletedEntryNoLongerClaimsAVerdict (finding 9b): an entry being deleted keeps no
// BackupsFresh verdict and serves no inventory metrics.
func TestADeletedEntryNoLongerClaimsAVerdict(t *testing.T) {
	f := newInventoryFixture(t, entryName, cluster(false))
	f.counted()
	f.update(func(be *extensionsv1alpha1.BackupEntry) { be.Finalizers = []string{"extensions.gardener.cloud/backup"} })
	if err := f.client.Delete(context.Background(), f.entry()); err != nil {
		t.Fatal(err)
	}
	listings := f.store.listings.Load()
	cond, _, _ := f.reconcile(entryName)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != entryinfo.ReasonDeleting {
		t.Fatalf("being deleted: %+v, want Unknown/%s", cond, entryinfo.ReasonDeleting)
	}
	if f.store.listings.Load() != listings {
		t.Error("an entry being deleted was counted")
	}
	if testutil.CollectAndCount(metrics.BackupsFresh) != 0 || testutil.CollectAndCount(metrics.EntryObjects) != 0 || latestSnapshotSeries() != 0 {
		t.Error("the metrics of an entry being deleted are still served")
	}
	// Idempotent: a second look writes nothing.
	before := f.entry().ResourceVersion
	f.clock.Step(time.Hour)
	f.reconcile(entryName)
	if f.entry().ResourceVersion != before {
		t.Error("a second look at an entry being deleted wrote its status again")
	}
}

// TestASwitchedOffInventoryRemovesWhatItPublished (finding 9b): with the interval 0, the
// controller's one look at each entry removes the condition, the inventory and the metrics an
// earlier run left.
func TestASwitchedOffInventoryRemovesWhatItPublished(t *testing.T) {
	f := newInventoryFixture(t, entryName, cluster(false))
	f.counted()
	f.inventoryTaker.opts.Interval = 0
	f.clock.Step(2 * time.Hour)
	listings := f.store.listings.Load()
	cond, ps, requeue := f.reconcile(entryName)
	if cond != nil || ps.Inventory != nil || f.entry().Status.ProviderStatus != nil {
		t.Fatalf("switched off, still published: %+v, %+v", cond, ps.Inventory)
	}
	if f.store.listings.Load() != listings || requeue != 0 {
		t.Errorf("switched off, still counting: %d listings (had %d), requeue %s", f.store.listings.Load(), listings, requeue)
	}
	if testutil.CollectAndCount(metrics.BackupsFresh) != 0 || testutil.CollectAndCount(metrics.EntryObjects) != 0 || latestSnapshotSeries() != 0 {
		t.Error("switched off, the metrics are still served")
	}
	if f.entry().Status.LastOperation == nil {
		t.Error("the library's status was touched")
	}
}

// TestAMoveBeforeItsReconcileDropsTheOldVerdict (finding 8): an entry moved while its reconcile
// runs gets Unknown/Recounting at once, without a listing of a bucket that may not be ready, and
// its new place is counted as soon as the reconcile succeeds, not at a first count's slot.
func TestAMoveBeforeItsReconcileDropsTheOldVerdict(t *testing.T) {
	ctx := context.Background()
	f := newInventoryFixture(t, entryName, cluster(false))
	f.counted()
	if err := f.store.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket-b"}); err != nil {
		t.Fatal(err)
	}
	f.update(func(be *extensionsv1alpha1.BackupEntry) { be.Spec.BucketName = "bucket-b" })
	setState := func(state gardencorev1beta1.LastOperationState) {
		be := f.entry()
		be.Status.LastOperation = &gardencorev1beta1.LastOperation{State: state}
		if err := f.client.Status().Update(ctx, be); err != nil {
			t.Fatal(err)
		}
	}
	setState(gardencorev1beta1.LastOperationStateProcessing)
	f.clock.Step(time.Minute)
	listings := f.store.listings.Load()
	cond, ps, _ := f.reconcile(entryName)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != ReasonRecounting || !strings.Contains(cond.Message, `from bucket "bucket" to bucket "bucket-b"`) {
		t.Fatalf("moved, reconcile running: %+v", cond)
	}
	if ps.Inventory != nil || f.store.listings.Load() != listings {
		t.Errorf("inventory %+v, %d listings (had %d)", ps.Inventory, f.store.listings.Load(), listings)
	}
	if testutil.CollectAndCount(metrics.BackupsFresh) != 0 || testutil.CollectAndCount(metrics.EntryObjects) != 0 || latestSnapshotSeries() != 0 {
		t.Error("the old bucket's metrics are still served")
	}

	setState(gardencorev1beta1.LastOperationStateSucceeded)
	f.clock.Step(time.Minute)
	cond, ps, _ = f.reconcile(entryName)
	if f.store.listings.Load() != listings+1 || ps.Inventory == nil || ps.Inventory.Bucket != "bucket-b" || ps.Inventory.Since == nil {
		t.Fatalf("not counted after the reconcile: %d listings (had %d), %+v", f.store.listings.Load(), listings, ps.Inventory)
	}
	if cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != "NoSnapshotYet" {
		t.Errorf("after the count: %+v", cond)
	}
}

// TestAGoneEntryIsNoLongerFailing: an entry that goes while its passes fail takes its failing
// series with it; nothing else would remove it.
func TestAGoneEntryIsNoLongerFailing(t *testing.T) {
	metrics.CountOperation(metrics.KindBackupEntry, metrics.OperationReconcile, "shoot--p--gone", "error")
	inventoryLifecycle.Gone("shoot--p--gone")
	if metrics.OperationFailingSince.DeleteLabelValues(metrics.KindBackupEntry, "shoot--p--gone", metrics.OperationReconcile, "error") {
		t.Fatal("the entry's failing series stays after it is gone")
	}
}

// TestARecountRetryWithNothingToDropWritesNothing: a recount that keeps failing publishes the
// same verdict on every retry; when the entry's providerStatus holds no inventory's part (only
// another's, the Etcd container), nothing is dropped and the status is not rewritten.
func TestARecountRetryWithNothingToDropWritesNothing(t *testing.T) {
	ctx := context.Background()
	f := newInventoryFixture(t, entryName, cluster(false))
	be := f.entry()
	entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { ps.EtcdContainer = "bucket" })
	if err := f.client.Status().Update(ctx, be); err != nil {
		t.Fatal(err)
	}
	verdict := inventory.Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonRecounting,
		Message: `The entry now uses bucket "bucket"; counting bucket "bucket" failed: listing refused. Retrying in a minute.`}
	if err := f.inventoryTaker.publish(ctx, f.entry(), nil, true, verdict); err != nil {
		t.Fatal(err)
	}
	published := f.entry()
	f.clock.Step(time.Minute)
	if err := f.inventoryTaker.publish(ctx, f.entry(), nil, true, verdict); err != nil {
		t.Fatal(err)
	}
	again := f.entry()
	if again.ResourceVersion != published.ResourceVersion {
		t.Errorf("the retry rewrote the status (resource version %s, was %s): %+v", again.ResourceVersion, published.ResourceVersion, again.Status.Conditions)
	}
	if ps, err := entryinfo.ReadProviderStatus(again); err != nil || ps.EtcdContainer != "bucket" {
		t.Errorf("providerStatus %+v (%v); want the Etcd container kept", ps, err)
	}
}
