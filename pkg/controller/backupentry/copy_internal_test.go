// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// sharedCopy is a copy bucket named explicitly (copy.bucketName), as two seeds may share it.
const sharedCopy = "shared-copy"

// withCopy gives the fixture's entry a copy in sharedCopy holding the entry's keys and the
// neighbours, and the copy's credentials secret.
func (f *entryFixture) withCopy() {
	f.withCopyIn(sharedCopy)
}

// withCopyIn is withCopy with the copy bucket named bucket.
func (f *entryFixture) withCopyIn(bucket string) {
	f.t.Helper()
	ctx := context.Background()
	if bucket != testBucket {
		if err := f.mem.EnsureBucket(ctx, objectstore.Bucket{Name: bucket}); err != nil {
			f.t.Fatal(err)
		}
		for _, k := range append(slices.Clone(entryKeys), neighbours...) {
			if err := f.mem.PutObject(ctx, bucket, k, []byte("copy of "+k)); err != nil {
				f.t.Fatal(err)
			}
		}
	}
	s := &copystore.Settings{CredentialsRef: "backup-copy", BucketName: bucket}
	if err := f.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: copystore.CredentialsNamespace, Name: s.CredentialsSecret()}}); err != nil {
		f.t.Fatal(err)
	}
	be := f.current()
	be.Spec.ProviderConfig = controllertest.RawConfig(controllertest.Config{CopyField: copystore.CopyField{Copy: s}})
	if err := f.client.Update(ctx, be); err != nil {
		f.t.Fatal(err)
	}
	f.be = f.current()
}

// copyKeys lists the keys in sharedCopy.
func (f *entryFixture) copyKeys() []string {
	f.t.Helper()
	var out []string
	err := f.mem.ListObjects(context.Background(), sharedCopy, "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			out = append(out, o.Key)
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func sortedNeighbours() []string {
	out := slices.Clone(neighbours)
	slices.Sort(out)
	return out
}

func countReason(evs []string, reason string) int {
	n := 0
	for _, e := range evs {
		if strings.Contains(e, " "+reason+" ") {
			n++
		}
	}
	return n
}

// deleting is the entry with deletionTimestamp at.
func deleting(be *extensionsv1alpha1.BackupEntry, at time.Time) *extensionsv1alpha1.BackupEntry {
	be = be.DeepCopy()
	ts := metav1.NewTime(at)
	be.DeletionTimestamp = &ts
	return be
}

// TestSourceEntryDeletesNothingInTheCopy: a migration's source- entry's prefix is the live entry's;
// in a copy bucket both seeds share (copy.bucketName) it holds the live entry's copies, so the
// source entry's deletion empties its primary prefix and leaves the copy alone.
func TestSourceEntryDeletesNothingInTheCopy(t *testing.T) {
	f := newEntryFixture(t, false)
	f.withCopy()
	// The live entry moved to another seed; the source entry is younger than every object.
	f.sourceEntry(testBucket, time.Now().Add(time.Hour), nil)
	d := f.delegate()
	now := time.Now().Add(24 * time.Hour)
	d.clock = clocktesting.NewFakePassiveClock(now)
	if err := d.Delete(context.Background(), logr.Discard(), deleting(f.be, now.Add(-time.Hour))); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if left := f.versions(testEntry + "/"); len(left) != 0 {
		t.Fatalf("the primary holds %v under the prefix; want it emptied", left)
	}
	want := append(slices.Clone(entryKeys), neighbours...)
	slices.Sort(want)
	if got := f.copyKeys(); !slices.Equal(got, want) {
		t.Fatalf("the shared copy holds %v; want the live entry's copies kept: %v", got, want)
	}
}

// TestCopyDeletionWaitsForAPassBegunBefore: the copy's prefix is deleted only when a pass of the
// entry copy begun before the deletionTimestamp has ended (connect.CopyPassDeadline and a margin);
// until then the deletion is requeued for that moment, the copy untouched, and the deletion is not
// reported done (PrefixDeleted) until the copy's prefix is deleted too, once.
func TestCopyDeletionWaitsForAPassBegunBefore(t *testing.T) {
	f := newEntryFixture(t, false)
	f.withCopy()
	deletedAt := time.Now()
	be := deleting(f.be, deletedAt)
	clock := clocktesting.NewFakePassiveClock(deletedAt.Add(connect.CopyPassDeadline))
	d := f.delegate()
	d.clock = clock

	err := d.Delete(context.Background(), logr.Discard(), be)
	var wait *CopyPassWaitError
	var requeue *reconcilerutils.RequeueAfterError
	// gardener's reconcilers recognise the RequeueAfterError by type: it is the outermost error.
	if requeue, _ = err.(*reconcilerutils.RequeueAfterError); requeue == nil || !errors.As(requeue.Cause, &wait) || requeue.RequeueAfter != copyPassMargin {
		t.Fatalf("Delete during the pass deadline = %v; want a CopyPassWaitError requeued after %s", err, copyPassMargin)
	}
	want := append(slices.Clone(entryKeys), neighbours...)
	slices.Sort(want)
	if got := f.copyKeys(); !slices.Equal(got, want) {
		t.Fatalf("the copy holds %v while waiting; want it untouched", got)
	}
	if evs := f.events(); countReason(evs, ReasonPrefixDeleted) != 0 {
		t.Fatalf("events %v while the copy waits; want no %s", evs, ReasonPrefixDeleted)
	}

	clock.SetTime(deletedAt.Add(connect.CopyPassDeadline + copyPassMargin))
	if err := d.Delete(context.Background(), logr.Discard(), be); err != nil {
		t.Fatalf("Delete after the wait: %v", err)
	}
	if got := f.copyKeys(); !slices.Equal(got, sortedNeighbours()) {
		t.Fatalf("the copy holds %v; want only the neighbours", got)
	}
	evs := f.events()
	if countReason(evs, ReasonPrefixDeleted) != 1 || countReason(evs, ReasonCopyPrefixDeleted) != 1 {
		t.Fatalf("events %v; want one %s and one %s", evs, ReasonPrefixDeleted, ReasonCopyPrefixDeleted)
	}
}

// TestCopyDeletionStopsWhileTheSeedConfigIsPending: while the seed configuration is not read, the
// deletion cannot tell the copy and stops with the pending error, the copy untouched, instead of
// ending as if there were none.
func TestCopyDeletionStopsWhileTheSeedConfigIsPending(t *testing.T) {
	f := newEntryFixture(t, false)
	f.withCopy()
	seeded, err := provider.WithSeedConfig(provider.Register(f.provider), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := f.delegate()
	d.provider = seeded
	now := time.Now()
	d.clock = clocktesting.NewFakePassiveClock(now.Add(time.Hour))
	seeded.Await("the seed's Extension is not applied yet")

	prefix, err := objectstore.EntryPrefix(testEntry)
	if err != nil {
		t.Fatal(err)
	}
	err = d.deleteCopyPrefix(context.Background(), logr.Discard(), deleting(f.be, now), prefix)
	if pending := (*provider.SeedConfigPendingError)(nil); !errors.As(err, &pending) {
		t.Fatalf("deleteCopyPrefix while the seed configuration is pending = %v; want the SeedConfigPendingError", err)
	}
	want := append(slices.Clone(entryKeys), neighbours...)
	slices.Sort(want)
	if got := f.copyKeys(); !slices.Equal(got, want) {
		t.Fatalf("the copy holds %v; want it untouched", got)
	}
}

// TestOrphanGuardEmptiesTheCopyToo: an entry whose secret is gone is deleted with its bucket's
// credentials in the primary and with the copy's in the copy before its finalizer goes.
func TestOrphanGuardEmptiesTheCopyToo(t *testing.T) {
	f := newEntryFixture(t, false)
	f.withCopy()
	f.orphan(true, []string{entryinfo.FinalizerName}, true, true)
	g := f.guard()
	g.deleter.clock = clocktesting.NewFakePassiveClock(time.Now().Add(time.Hour))
	if _, err := g.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: f.be.Name}}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if err := f.client.Get(context.Background(), client.ObjectKey{Name: f.be.Name}, &extensionsv1alpha1.BackupEntry{}); !apierrors.IsNotFound(err) {
		t.Fatalf("entry get %v; want it gone", err)
	}
	if got := f.copyKeys(); !slices.Equal(got, sortedNeighbours()) {
		t.Fatalf("the copy holds %v; want only the neighbours", got)
	}
}

// TestCopyDeletionWithAnInvalidEntryConfig: an entry whose providerConfig is invalid for another
// reason than a pending seed configuration deletes in the seed configuration's copy (Decode's
// fallback), as the entry copy copies there meanwhile.
func TestCopyDeletionWithAnInvalidEntryConfig(t *testing.T) {
	f := newEntryFixture(t, false)
	f.withCopy()
	seedConfig, err := json.Marshal(f.be.Spec.ProviderConfig)
	if err != nil {
		t.Fatal(err)
	}
	seeded, err := provider.WithSeedConfig(provider.Register(f.provider), seedConfig, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := f.delegate()
	d.provider = seeded
	now := time.Now()
	d.clock = clocktesting.NewFakePassiveClock(now.Add(time.Hour))
	be := deleting(f.be, now)
	be.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(`{"copy": "not an object"}`)}
	if _, err := connect.EntryConfig(seeded, be); err == nil {
		t.Fatal("the entry's providerConfig decodes; want it invalid")
	}
	prefix, err := objectstore.EntryPrefix(testEntry)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.deleteCopyPrefix(context.Background(), logr.Discard(), be, prefix); err != nil {
		t.Fatalf("deleteCopyPrefix: %v", err)
	}
	if got := f.copyKeys(); !slices.Equal(got, sortedNeighbours()) {
		t.Fatalf("the copy holds %v; want only the neighbours", got)
	}
}

// TestACopyThatIsThePrimaryIsNone: a copy bucket named as the entry's own bucket is no copy (the
// BackupBucket refuses it): the deletion neither waits for the entry copy nor reports a deletion
// in a copy.
func TestACopyThatIsThePrimaryIsNone(t *testing.T) {
	f := newEntryFixture(t, false)
	f.withCopyIn(testBucket)
	d := f.delegate()
	now := time.Now()
	d.clock = clocktesting.NewFakePassiveClock(now)
	if err := d.Delete(context.Background(), logr.Discard(), deleting(f.be, now)); err != nil {
		t.Fatalf("Delete: %v; want done without waiting for the entry copy", err)
	}
	if evs := f.events(); countReason(evs, ReasonCopyPrefixDeleted) != 0 || countReason(evs, ReasonPrefixDeleted) != 1 {
		t.Fatalf("events %v; want one %s and no %s", evs, ReasonPrefixDeleted, ReasonCopyPrefixDeleted)
	}
}
