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

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

var bucketSecretRef = corev1.SecretReference{Namespace: "garden", Name: "bucket-credentials"}

// orphan makes the fixture's entry one whose credentials secret is gone, with the given
// finalizers, in deletion if deleting; with its BackupBucket and the bucket's secret if asked.
func (f *entryFixture) orphan(deleting bool, finalizers []string, withBucket, withBucketSecret bool) {
	f.t.Helper()
	ctx := context.Background()
	be := f.current()
	be.Spec.SecretRef = corev1.SecretReference{Namespace: "garden", Name: "entry-credentials-gone"}
	be.Finalizers = finalizers
	if err := f.client.Update(ctx, be); err != nil {
		f.t.Fatal(err)
	}
	if deleting {
		if err := f.client.Delete(ctx, be); err != nil {
			f.t.Fatal(err)
		}
	}
	if withBucket {
		bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: testBucket},
			Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, Region: "local", SecretRef: bucketSecretRef}}
		if err := f.client.Create(ctx, bb); err != nil {
			f.t.Fatal(err)
		}
	}
	if withBucketSecret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: bucketSecretRef.Namespace, Name: bucketSecretRef.Name}, Data: map[string][]byte{"key": []byte("operator")}}
		if err := f.client.Create(ctx, s); err != nil {
			f.t.Fatal(err)
		}
	}
	f.be = f.current()
}

func (f *entryFixture) guard() *orphanGuard {
	return &orphanGuard{client: f.client, reader: f.client, recorder: f.recorder, deleter: f.delegate()}
}

func (f *entryFixture) reconcileGuard() (reconcile.Result, error) {
	return f.guard().Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: f.be.Name}})
}

// TestOrphanGuardReportsAMissingSecret: an entry whose credentials secret is gone gets the
// error on its status with its code, once (a second reconcile emits no second event).
func TestOrphanGuardReportsAMissingSecret(t *testing.T) {
	f := newEntryFixture(t, false)
	f.orphan(false, []string{entryinfo.FinalizerName}, true, true)
	// As the library leaves it: Processing written, then stopped at the missing secret.
	f.be.Status.LastOperation = &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateProcessing, LastUpdateTime: metav1.NewTime(time.Now().Add(-time.Minute))}
	if err := f.client.Status().Update(context.Background(), f.be); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		if res, err := f.reconcileGuard(); err != nil || res != (reconcile.Result{}) {
			t.Fatalf("round %d: Reconcile = %v, %v", round, res, err)
		}
	}
	last := f.current().Status.LastError
	if last == nil || !slices.Equal(last.Codes, []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) ||
		!strings.Contains(last.Description, "spec.secretRef: credentials secret garden/entry-credentials-gone does not exist") {
		t.Fatalf("status.lastError %+v; want ERR_CONFIGURATION_PROBLEM naming the secret", last)
	}
	if evs := f.events(); len(evs) != 1 || !strings.Contains(evs[0], ReasonSecretMissing) {
		t.Fatalf("events %v; want one %s", evs, ReasonSecretMissing)
	}
	if left := f.versions(testEntry + "/"); len(left) != len(entryKeys) {
		t.Fatalf("objects deleted for an entry that is not deleted: %v left", left)
	}
}

// TestOrphanGuardDeletion: an entry in deletion whose secret is gone, and which the library has
// given up (its finalizer is gone, ours holds), is deleted with its bucket's credentials, or kept
// with the reason and its code on its status.
func TestOrphanGuardDeletion(t *testing.T) {
	cases := []struct {
		name             string
		finalizers       []string
		withBucket       bool
		withBucketSecret bool
		setup            func(*entryFixture)
		wantDeleted      bool // the prefix emptied and the entry gone
		wantReason       string
		wantCode         gardencorev1beta1.ErrorCode
		wantRequeue      bool
		wantErr          string
	}{
		{name: "deleted with the bucket's credentials", finalizers: []string{entryinfo.FinalizerName}, withBucket: true, withBucketSecret: true, wantDeleted: true, wantReason: ReasonPrefixDeletedWithBucketSecret},
		{name: "library still holds it", finalizers: []string{entryinfo.FinalizerName, backupentry.FinalizerName}, withBucket: true, withBucketSecret: true},
		{name: "bucket gone", finalizers: []string{entryinfo.FinalizerName}, wantReason: ReasonObjectsKept, wantCode: gardencorev1beta1.ErrorConfigurationProblem,
			wantErr: `BackupBucket "bucket", whose credentials could stand in, is gone too`},
		{name: "bucket's secret gone", finalizers: []string{entryinfo.FinalizerName}, withBucket: true, wantReason: ReasonObjectsKept, wantCode: gardencorev1beta1.ErrorConfigurationProblem,
			wantErr: "the BackupBucket's credentials secret garden/bucket-credentials is gone too"},
		{name: "bucket's credentials refused", finalizers: []string{entryinfo.FinalizerName}, withBucket: true, withBucketSecret: true,
			setup:      func(f *entryFixture) { f.store.FailObjects(wrap(objectstore.ErrForbidden)) },
			wantReason: ReasonDeletionWithBucketSecret, wantCode: gardencorev1beta1.ErrorInfraUnauthorized, wantErr: "could not be deleted"},
		{name: "pass cut off: resumed, not reported", finalizers: []string{entryinfo.FinalizerName}, withBucket: true, withBucketSecret: true,
			setup: func(f *entryFixture) { f.store.HangAfter(memstore.OpDeleteObjects, 0) }, wantRequeue: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEntryFixture(t, false)
			outside := f.outside()
			f.orphan(true, c.finalizers, c.withBucket, c.withBucketSecret)
			if c.setup != nil {
				c.setup(f)
			}
			ctx := context.Background()
			if c.wantRequeue {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
			}
			res, err := f.guard().Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: f.be.Name}})
			if c.wantRequeue != (res.RequeueAfter == lasterror.ProgressRequeue) {
				t.Fatalf("Reconcile = %+v, %v; want requeued at once: %v", res, err, c.wantRequeue)
			}
			if c.wantCode == "" && err != nil || c.wantCode != "" && !slices.Equal(codes(err), []gardencorev1beta1.ErrorCode{c.wantCode}) {
				t.Fatalf("Reconcile = %v (codes %v); want code %q", err, codes(err), c.wantCode)
			}
			if c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Reconcile = %v; want it to say %q", err, c.wantErr)
			}
			left := f.versions(testEntry + "/")
			gerr := f.client.Get(context.Background(), client.ObjectKey{Name: f.be.Name}, &extensionsv1alpha1.BackupEntry{})
			if c.wantDeleted {
				if len(left) != 0 || !apierrors.IsNotFound(gerr) {
					t.Fatalf("left %v, entry get %v; want the prefix emptied and the entry gone", left, gerr)
				}
			} else {
				if gerr != nil || !slices.Equal(f.current().Finalizers, c.finalizers) {
					t.Fatalf("entry get %v; want it kept with its finalizers %v", gerr, c.finalizers)
				}
				if !c.wantRequeue && len(left) != len(entryKeys) {
					t.Fatalf("left %v; want the objects kept", left)
				}
			}
			if after := f.outside(); !slices.Equal(after, outside) {
				t.Fatalf("outside the prefix before %v, after %v", outside, after)
			}
			evs := f.events()
			if c.wantReason == "" && len(evs) != 0 || c.wantReason != "" && (len(evs) == 0 || !strings.Contains(evs[len(evs)-1], c.wantReason)) {
				t.Fatalf("events %v; want the last to be %q", evs, c.wantReason)
			}
			if c.wantCode != "" {
				last := f.current().Status.LastError
				if last == nil || !slices.Equal(last.Codes, []gardencorev1beta1.ErrorCode{c.wantCode}) || !strings.Contains(last.Description, c.wantErr) {
					t.Fatalf("status.lastError %+v; want %s saying %q", last, c.wantCode, c.wantErr)
				}
			}
			var orphan *OrphanError
			if isOrphan := errors.As(err, &orphan); isOrphan != (c.wantReason == ReasonObjectsKept) {
				t.Fatalf("Reconcile = %v; an OrphanError exactly when the objects are kept for good", err)
			}
		})
	}
}

// secretReads counts the guard's reads of secrets from the API server.
type secretReads struct {
	client.Reader

	n int
}

func (r *secretReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		r.n++
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestOrphanGuardLeavesAnEntryInProgressAlone: an entry the library has not tried yet (however
// long it waits in the queue) or has succeeded costs the guard no read; one the library has just
// written Processing is looked at when it has settled, and its missing secret reported then; an
// entry in another state is looked at at once.
func TestOrphanGuardLeavesAnEntryInProgressAlone(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		created  time.Time
		last     *gardencorev1beta1.LastOperation
		wantWait time.Duration
	}{
		{"new", now.Add(-time.Hour), nil, 0},
		{"processing", now.Add(-time.Hour), &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateProcessing, LastUpdateTime: metav1.NewTime(now.Add(-time.Second))}, settleTime - time.Second},
		{"processing long", now.Add(-time.Hour), &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateProcessing, LastUpdateTime: metav1.NewTime(now.Add(-time.Minute))}, 0},
		{"failed just now", now.Add(-time.Hour), &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateError, LastUpdateTime: metav1.NewTime(now)}, 0},
		{"succeeded by the time the guard looks", now.Add(-time.Hour), &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateSucceeded, LastUpdateTime: metav1.NewTime(now)}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEntryFixture(t, false)
			f.orphan(false, []string{entryinfo.FinalizerName}, true, true)
			be := f.current()
			be.CreationTimestamp = metav1.NewTime(c.created)
			be.Status.LastOperation = c.last
			reads := &secretReads{Reader: f.client}
			g := &orphanGuard{client: f.client, reader: reads, recorder: f.recorder, deleter: f.delegate(), clock: clocktesting.NewFakePassiveClock(now)}
			if settling(be, now) != c.wantWait {
				t.Fatalf("settling = %s; want %s", settling(be, now), c.wantWait)
			}
			if err := f.client.Update(ctx, be); err != nil {
				t.Fatal(err)
			}
			be.Status.LastOperation = c.last
			if err := f.client.Status().Update(ctx, be); err != nil {
				t.Fatal(err)
			}
			if got := f.current(); !got.CreationTimestamp.Equal(&be.CreationTimestamp) {
				t.Fatalf("the fake client kept creation time %s", got.CreationTimestamp)
			}
			res, err := g.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: be.Name}})
			if err != nil {
				t.Fatal(err)
			}
			if c.last == nil || c.last.State == gardencorev1beta1.LastOperationStateSucceeded {
				if reads.n != 0 || res != (reconcile.Result{}) {
					t.Fatalf("an entry not tried yet or succeeded: %d secret reads, %+v; want none: the library reads it (and its Processing wakes the guard)", reads.n, res)
				}
				return
			}
			if c.wantWait > 0 {
				if reads.n != 0 || res.RequeueAfter <= 0 || res.RequeueAfter > settleTime || f.current().Status.LastError != nil {
					t.Fatalf("an entry in progress: %d secret reads, requeue %s, lastError %v; want none, a look within %s, none", reads.n, res.RequeueAfter, f.current().Status.LastError, settleTime)
				}
				return
			}
			if reads.n != 1 || f.current().Status.LastError == nil {
				t.Fatalf("a settled entry: %d secret reads, lastError %v; want the secret read and the missing secret reported", reads.n, f.current().Status.LastError)
			}
		})
	}
}
