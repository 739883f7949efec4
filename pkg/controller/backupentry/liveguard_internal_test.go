// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// sourceEntry creates the migration's source entry of the fixture's entry on bucket, created at
// created, held by FinalizerName, and makes it the fixture's entry; the live entry stays as
// live says (nil: gone from this seed).
func (f *entryFixture) sourceEntry(bucket string, created time.Time, live func(*extensionsv1alpha1.BackupEntry) bool) {
	f.t.Helper()
	ctx := context.Background()
	liveEntry := f.current()
	if live == nil || !live(liveEntry) {
		if err := f.client.Delete(ctx, liveEntry); err != nil {
			f.t.Fatal(err)
		}
	} else if err := f.client.Update(ctx, liveEntry); err != nil {
		f.t.Fatal(err)
	}
	src := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "source-" + testEntry, CreationTimestamp: metav1.NewTime(created)}, Spec: liveEntry.Spec}
	src.Spec.BucketName = bucket
	if err := f.client.Create(ctx, src); err != nil {
		f.t.Fatal(err)
	}
	f.be = src
	if err := f.actuator().hold(ctx, f.be); err != nil {
		f.t.Fatal(err)
	}
}

// TestSourceEntryDeletionKeepsTheLiveEntrysBackups (finding 5): deleting a migration's source
// entry never deletes the objects that the live entry still uses: it is refused, before anything
// is deleted, when the live entry on this seed names the same bucket, or when objects under the
// prefix were written after the source entry was created (a live entry on another seed). In
// gardener's own flow (the live entry on another bucket, or moved to another seed, and the
// source's last snapshot older than the source entry) the prefix is deleted as before.
func TestSourceEntryDeletionKeepsTheLiveEntrysBackups(t *testing.T) {
	written := time.Now() // the fixture's objects are written now
	sameBucket := func(_ *extensionsv1alpha1.BackupEntry) bool { return true }
	otherBucket := func(be *extensionsv1alpha1.BackupEntry) bool { be.Spec.BucketName = "target"; return true }
	cases := []struct {
		name    string
		bucket  string
		created time.Time
		live    func(*extensionsv1alpha1.BackupEntry) bool
		setup   func(*entryFixture)
		// wantRefused: the deletion is refused with a *LiveEntryError whose message says this.
		wantRefused string
	}{
		{name: "live entry on this seed names the same bucket", bucket: testBucket, created: written.Add(time.Hour), live: sameBucket,
			wantRefused: `BackupEntry "` + testEntry + `" on this seed names the same bucket and still uses them`},
		{name: "objects written after the source entry was created (a live entry elsewhere)", bucket: testBucket, created: written.Add(-time.Hour),
			wantRefused: "after this entry was created at " + written.Add(-time.Hour).UTC().Format(time.RFC3339) + `: the live BackupEntry "` + testEntry + `" (on another seed) still writes backups there`},
		{name: "live entry on another seed and on this one elsewhere: written-after still refuses", bucket: testBucket, created: written.Add(-time.Hour), live: otherBucket,
			wantRefused: "still writes backups there"},
		{name: "gardener's flow: live entry on this seed on the target bucket, snapshots older than the source entry", bucket: testBucket, created: written.Add(time.Hour), live: otherBucket},
		{name: "gardener's flow: live entry moved to another seed, snapshots older than the source entry", bucket: testBucket, created: written.Add(time.Hour)},
		{name: "written within the clocks' skew of the creation", bucket: testBucket, created: written.Add(-liveWriteSkew / 2)},
		{name: "live entry on this seed is being deleted itself", bucket: testBucket, created: written.Add(time.Hour), live: func(be *extensionsv1alpha1.BackupEntry) bool {
			be.Finalizers = []string{"test/hold"}
			return true
		}, setup: func(f *entryFixture) {
			if err := f.client.Delete(context.Background(), &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: testEntry}}); err != nil {
				f.t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEntryFixture(t, false)
			outside := f.outside()
			f.sourceEntry(c.bucket, c.created, c.live)
			if c.setup != nil {
				c.setup(f)
			}
			err := f.actuator().Delete(context.Background(), logr.Discard(), f.current())
			left := f.versions(testEntry + "/")
			if c.wantRefused == "" {
				if err != nil || len(left) != 0 || f.held() {
					t.Fatalf("Delete = %v, left %v, held %v; want the prefix deleted and the entry released", err, left, f.held())
				}
				if evs := f.events(); slices.ContainsFunc(evs, func(e string) bool { return strings.Contains(e, ReasonLiveBackupsKept) }) {
					t.Fatalf("events %v; want no %s", evs, ReasonLiveBackupsKept)
				}
			} else {
				var refused *LiveEntryError
				if !errors.As(err, &refused) || !strings.Contains(err.Error(), c.wantRefused) {
					t.Fatalf("Delete = %v; want a refusal saying %q", err, c.wantRefused)
				}
				if got := codes(err); !slices.Equal(got, []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) {
					t.Fatalf("codes %v; want ERR_CONFIGURATION_PROBLEM", got)
				}
				if len(left) != len(entryKeys) || !f.held() {
					t.Fatalf("left %v, held %v; want every object kept and the entry held for the next attempt", left, f.held())
				}
				if !strings.Contains(err.Error(), "removing its finalizers "+entryinfo.FinalizerName) {
					t.Fatalf("Delete = %v; want it to say how to end the entry without deleting", err)
				}
				evs := f.events()
				if len(evs) == 0 || !strings.Contains(evs[len(evs)-1], ReasonLiveBackupsKept) || !strings.Contains(evs[len(evs)-1], c.wantRefused) {
					t.Fatalf("events %v; want a %s event saying %q", evs, ReasonLiveBackupsKept, c.wantRefused)
				}
			}
			if after := f.outside(); !slices.Equal(after, outside) {
				t.Fatalf("outside the prefix before %v, after %v", outside, after)
			}
		})
	}
}

// TestSourceEntryGuardIgnoresMarkersAndOldVersions: what a plain read of a key does not return
// (delete markers a lifecycle rule or the sidecar's garbage collection writes, older versions)
// is no sign of a live writer; a current version is.
func TestSourceEntryGuardIgnoresMarkersAndOldVersions(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t, true)
	f.sourceEntry(testBucket, time.Now().Add(-time.Hour), nil)
	entryPrefix, err := objectstore.EntryPrefix(testEntry)
	if err != nil {
		t.Fatal(err)
	}
	// Every current version under the prefix gets a delete marker (written now).
	var current []objectstore.ObjectVersion
	for _, k := range entryKeys {
		current = append(current, objectstore.ObjectVersion{Key: k})
	}
	if _, err := f.mem.DeleteObjects(ctx, testBucket, current); err != nil {
		t.Fatal(err)
	}
	if err := f.delegate().guardLiveEntry(ctx, f.current(), entryPrefix, f.be.Spec.SecretRef); err != nil {
		t.Fatalf("guard = %v; want markers and noncurrent versions not taken for a live writer", err)
	}
	if err := f.mem.PutObject(ctx, testBucket, testEntry+"/etcd-main/v2/Incr-9", []byte("live")); err != nil {
		t.Fatal(err)
	}
	if err := f.delegate().guardLiveEntry(ctx, f.current(), entryPrefix, f.be.Spec.SecretRef); !errors.As(err, new(*LiveEntryError)) {
		t.Fatalf("guard = %v; want a refusal for a current version written after the entry was created", err)
	}
}

// TestOrphanGuardKeepsTheLiveEntrysBackups: the orphan guard's deletion with the bucket's
// credentials is refused in the same way (finding 5).
func TestOrphanGuardKeepsTheLiveEntrysBackups(t *testing.T) {
	f := newEntryFixture(t, false)
	// Created before the objects were written (the orphan guard lets a new entry settle first).
	f.sourceEntry(testBucket, time.Now().Add(-time.Hour), func(*extensionsv1alpha1.BackupEntry) bool { return true })
	f.orphan(true, []string{entryinfo.FinalizerName}, true, true)
	_, err := f.reconcileGuard()
	if !errors.As(err, new(*LiveEntryError)) || !slices.Equal(codes(err), []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) {
		t.Fatalf("Reconcile = %v (codes %v); want a refusal with ERR_CONFIGURATION_PROBLEM", err, codes(err))
	}
	if left := f.versions(testEntry + "/"); len(left) != len(entryKeys) {
		t.Fatalf("left %v; want every object kept", left)
	}
	if gerr := f.client.Get(context.Background(), client.ObjectKey{Name: f.be.Name}, &extensionsv1alpha1.BackupEntry{}); gerr != nil {
		t.Fatalf("entry get %v; want it kept", gerr)
	}
	last := f.current().Status.LastError
	if last == nil || !strings.Contains(last.Description, "names the same bucket and still uses them") {
		t.Fatalf("status.lastError %+v; want the refusal", last)
	}
	if evs := f.events(); len(evs) == 0 || !strings.Contains(evs[len(evs)-1], ReasonLiveBackupsKept) {
		t.Fatalf("events %v; want the last to be %s", evs, ReasonLiveBackupsKept)
	}
}

// TestOrphanGuardSaysWhereASourceEntrysBucketIs (finding 9a): a source entry's BackupBucket
// lives on the source seed by design; the reason says so instead of calling it gone.
func TestOrphanGuardSaysWhereASourceEntrysBucketIs(t *testing.T) {
	cases := []struct {
		name, entry, want, notWant string
	}{
		{name: "source entry", entry: "source-" + testEntry, want: `BackupBucket "bucket", whose credentials could stand in, is not on this seed: a control-plane migration's source entry names the source seed's bucket`, notWant: "gone too"},
		{name: "own entry", entry: testEntry, want: `BackupBucket "bucket", whose credentials could stand in, is gone too`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEntryFixture(t, false)
			if c.entry != testEntry {
				f.sourceEntry(testBucket, time.Now().Add(-time.Hour), nil)
			}
			f.orphan(true, []string{entryinfo.FinalizerName}, false, false)
			res, err := f.guard().Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: c.entry}})
			if err == nil || !strings.Contains(err.Error(), c.want) || c.notWant != "" && strings.Contains(err.Error(), c.notWant) {
				t.Fatalf("Reconcile = %+v, %v; want it to say %q (and not %q)", res, err, c.want, c.notWant)
			}
			if left := f.versions(testEntry + "/"); len(left) != len(entryKeys) {
				t.Fatalf("left %v; want every object kept", left)
			}
			if gerr := f.client.Get(context.Background(), client.ObjectKey{Name: c.entry}, &extensionsv1alpha1.BackupEntry{}); apierrors.IsNotFound(gerr) {
				t.Fatal("the entry is gone; want it kept")
			}
		})
	}
}
