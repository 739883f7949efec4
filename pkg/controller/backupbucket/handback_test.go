// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// TestHandedBackBucketLetsGoOfItsEntries: a bucket reconciled with handBack releases every
// BackupEntry that names it from this extension's finalizer (the provider extension taking the
// bucket back deletes them without it, and nothing of this extension would remove it after the
// switch); entries of other buckets stay held, and without handBack nothing is released.
func TestHandedBackBucketLetsGoOfItsEntries(t *testing.T) {
	for _, handBack := range []bool{true, false} {
		t.Run(map[bool]string{true: "handBack", false: "no handBack"}[handBack], func(t *testing.T) {
			ctx := context.Background()
			k8s := clientWithStatus(t)
			entries := map[string]string{"shoot--p--s--1": "bucket", "shoot--p--t--1": "bucket", "shoot--p--u--1": "other"}
			for name, bucket := range entries {
				be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{entryinfo.FinalizerName}},
					Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: bucket}}
				if err := k8s.Create(ctx, be); err != nil {
					t.Fatal(err)
				}
			}
			bb := createBucket(t, k8s, controllertest.Config{HandBack: handBack})
			a := newActuator(k8s, controllertest.Bucket(t, "bucket"), events.NewFakeRecorder(10))
			if err := a.Reconcile(ctx, logr.Discard(), bb); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			for name, bucket := range entries {
				be := &extensionsv1alpha1.BackupEntry{}
				if err := k8s.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
					t.Fatal(err)
				}
				wantHeld := !handBack || bucket != "bucket"
				if held := slices.Contains(be.Finalizers, entryinfo.FinalizerName); held != wantHeld {
					t.Errorf("entry %s of bucket %s: finalizers %v; want held: %t", name, bucket, be.Finalizers, wantHeld)
				}
			}
		})
	}
}

// clientWithStatus is controllertest.Client's fake API server with BackupBuckets' status
// subresource, which the hand-back's condition is written to.
func clientWithStatus(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := extensionsv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, Data: map[string][]byte{"key": []byte("value")}}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret).WithStatusSubresource(&extensionsv1alpha1.BackupBucket{}).Build()
}

// waitingStore is a memstore whose EnsureBucket converges and then answers wait, as a provider
// answers a hand-back the store cannot complete yet (an *objectstore.HandBackWaitError).
type waitingStore struct {
	*memstore.Store

	wait error
}

func (s *waitingStore) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	if err := s.Store.EnsureBucket(ctx, b); err != nil {
		return err
	}
	return s.wait
}

// TestHandBackWaitsForTheStore (issue 43): a hand-back the store cannot complete yet (gcp's
// noncurrent generations, openstack's versions, azure's account) does not fail the BackupBucket,
// which would stop gardenlet syncing the secrets the hand-back waits for: the reconcile succeeds,
// condition HandBack says WaitingForStore (False when only the operator removes the cause,
// Progressing when it goes by itself) with the store's words, the entries stay held; once the
// cause is gone, the next reconcile hands back by itself.
func TestHandBackWaitsForTheStore(t *testing.T) {
	for _, byOperator := range []bool{false, true} {
		t.Run(map[bool]string{false: "by itself", true: "by the operator"}[byOperator], func(t *testing.T) {
			ctx := context.Background()
			k8s := clientWithStatus(t)
			be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--s--1", Finalizers: []string{entryinfo.FinalizerName}},
				Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: "bucket"}}
			bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket"}, Spec: extensionsv1alpha1.BackupBucketSpec{
				SecretRef: controllertest.SecretRef, DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: controllertest.RawConfig(controllertest.Config{HandBack: true})}}}
			for _, o := range []client.Object{be, bb} {
				if err := k8s.Create(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
			store := &waitingStore{Store: controllertest.Bucket(t, "bucket"), wait: &objectstore.HandBackWaitError{Bucket: "bucket", Why: "2 noncurrent generations are left", ByOperator: byOperator}}
			a := newActuator(k8s, store, events.NewFakeRecorder(10))
			reconcile := func() *gardencorev1beta1.Condition {
				t.Helper()
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
					t.Fatal(err)
				}
				if err := a.Reconcile(ctx, logr.Discard(), bb); err != nil {
					t.Fatalf("Reconcile: %v; want success while the hand-back waits", err)
				}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
					t.Fatal(err)
				}
				c := v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionHandBack)
				if c == nil {
					t.Fatal("no HandBack condition")
				}
				return c
			}
			c := reconcile()
			wantStatus := map[bool]gardencorev1beta1.ConditionStatus{false: gardencorev1beta1.ConditionProgressing, true: gardencorev1beta1.ConditionFalse}[byOperator]
			if c.Status != wantStatus || c.Reason != backupbucket.ReasonHandBackStore || !strings.Contains(c.Message, "2 noncurrent generations are left") {
				t.Fatalf("condition %s/%s %q; want %s/%s with the store's words", c.Status, c.Reason, c.Message, wantStatus, backupbucket.ReasonHandBackStore)
			}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(be), be); err != nil || !slices.Contains(be.Finalizers, entryinfo.FinalizerName) {
				t.Fatalf("entry released while the store waits: %v, %v", be.Finalizers, err)
			}
			store.wait = nil // the cause is gone
			if c := reconcile(); c.Status != gardencorev1beta1.ConditionTrue || c.Reason != backupbucket.ReasonHandedBack {
				t.Fatalf("condition %s/%s %q after the cause went; want True/HandedBack", c.Status, c.Reason, c.Message)
			}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(be), be); err != nil || slices.Contains(be.Finalizers, entryinfo.FinalizerName) {
				t.Fatalf("entry still held after the hand-back: %v, %v", be.Finalizers, err)
			}
		})
	}
}

// completingStore is a memstore that records each EnsureBucket's objectstore.Bucket
// HandBackComplete and answers wait (when set) to the calls with it set alone.
type completingStore struct {
	*memstore.Store

	calls []bool
	wait  error
}

func (s *completingStore) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	s.calls = append(s.calls, b.HandBackComplete)
	if err := s.Store.EnsureBucket(ctx, b); err != nil || !b.HandBackComplete {
		return err
	}
	return s.wait
}

// TestHandBackCompletesOnlyInTheFinalPass: the provider is asked to remove this extension's marks
// (objectstore.Bucket.HandBackComplete) only in the pass that has nothing else to wait for, after
// its first look; a store that cannot be handed back at that call after all leaves the
// hand-back waiting (WaitingForStore), not HandedBack, and the next pass completes it.
func TestHandBackCompletesOnlyInTheFinalPass(t *testing.T) {
	ctx := context.Background()
	k8s := clientWithStatus(t)
	bb := createBucket(t, k8s, controllertest.Config{HandBack: true})
	store := &completingStore{Store: controllertest.Bucket(t, "bucket"), wait: &objectstore.HandBackWaitError{Bucket: "bucket", Why: "a deferral rule was added meanwhile"}}
	a := newActuator(k8s, store, events.NewFakeRecorder(10))
	reconcile := func() *gardencorev1beta1.Condition {
		t.Helper()
		store.calls = nil
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
			t.Fatal(err)
		}
		if err := a.Reconcile(ctx, logr.Discard(), bb); err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
			t.Fatal(err)
		}
		return v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionHandBack)
	}
	if c := reconcile(); c == nil || c.Reason != backupbucket.ReasonHandBackStore || !strings.Contains(c.Message, "a deferral rule was added meanwhile") {
		t.Fatalf("condition %v when the completing call waits; want WaitingForStore with the store's words", c)
	}
	if want := []bool{false, true}; !slices.Equal(store.calls, want) {
		t.Fatalf("EnsureBucket's HandBackComplete per call: %v; want %v", store.calls, want)
	}
	store.wait = nil
	if c := reconcile(); c == nil || c.Reason != backupbucket.ReasonHandedBack {
		t.Fatalf("condition %v; want HandedBack", c)
	}
	if want := []bool{false, true}; !slices.Equal(store.calls, want) {
		t.Fatalf("EnsureBucket's HandBackComplete per call: %v; want %v", store.calls, want)
	}
}
