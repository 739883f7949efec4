// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"slices"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestHoldLetsGoOfEntriesWhoseBucketIsHandedBack: once the entry's BackupBucket has handed the
// bucket back (providerConfig handBack, condition HandBack True), the entry is not held by this
// extension's finalizer (the provider extension taking the bucket back deletes entries without
// it), and one held before is let go; otherwise it is held, also while the hand-back waits
// (issue 43: this extension is still in charge then, and an entry deleted meanwhile whose secret
// went first would lose its deletion and its credential's revocation).
func TestHoldLetsGoOfEntriesWhoseBucketIsHandedBack(t *testing.T) {
	complete := []gardencorev1beta1.Condition{{Type: entryinfo.ConditionHandBack, Status: gardencorev1beta1.ConditionTrue}}
	waiting := []gardencorev1beta1.Condition{{Type: entryinfo.ConditionHandBack, Status: gardencorev1beta1.ConditionProgressing}}
	cases := []struct {
		name       string
		bucket     *controllertest.Config // nil: no BackupBucket on this seed
		conditions []gardencorev1beta1.Condition
		finalizers []string
		wantHeld   bool
	}{
		{name: "bucket not handed back: held", bucket: &controllertest.Config{}, wantHeld: true},
		{name: "bucket not on this seed: held", wantHeld: true},
		{name: "bucket handed back: not held", bucket: &controllertest.Config{HandBack: true}, conditions: complete},
		{name: "bucket handed back, held before: let go", bucket: &controllertest.Config{HandBack: true}, conditions: complete, finalizers: []string{entryinfo.FinalizerName}},
		{name: "hand-back waiting: held", bucket: &controllertest.Config{HandBack: true}, conditions: waiting, wantHeld: true},
		{name: "hand-back waiting, held before: still held", bucket: &controllertest.Config{HandBack: true}, conditions: waiting, finalizers: []string{entryinfo.FinalizerName}, wantHeld: true},
		{name: "hand-back not looked at yet: held", bucket: &controllertest.Config{HandBack: true}, wantHeld: true},
		{name: "handBack unset after a hand-back (condition left): held", bucket: &controllertest.Config{}, conditions: complete, wantHeld: true},
		{name: "the bucket releasing its entries: let go", bucket: &controllertest.Config{HandBack: true}, finalizers: []string{entryinfo.FinalizerName},
			conditions: []gardencorev1beta1.Condition{{Type: entryinfo.ConditionHandBack, Status: gardencorev1beta1.ConditionProgressing, Reason: entryinfo.ReasonHandBackReleasing}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			k8s := controllertest.Client()
			if c.bucket != nil {
				bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket"},
					Spec:   extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: controllertest.RawConfig(*c.bucket)}},
					Status: extensionsv1alpha1.BackupBucketStatus{DefaultStatus: extensionsv1alpha1.DefaultStatus{Conditions: c.conditions}}}
				if err := k8s.Create(ctx, bb); err != nil {
					t.Fatal(err)
				}
			}
			be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--s--1", Finalizers: c.finalizers},
				Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: "bucket"}}
			if err := k8s.Create(ctx, be); err != nil {
				t.Fatal(err)
			}
			a := &holdingActuator{client: k8s, reader: k8s, provider: provider.Register(controllertest.Provider{})}
			if err := a.hold(ctx, be); err != nil {
				t.Fatalf("hold: %v", err)
			}
			got := &extensionsv1alpha1.BackupEntry{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(be), got); err != nil {
				t.Fatal(err)
			}
			if held := slices.Contains(got.Finalizers, entryinfo.FinalizerName); held != c.wantHeld {
				t.Fatalf("finalizers %v; want held by %s: %t", got.Finalizers, entryinfo.FinalizerName, c.wantHeld)
			}
		})
	}
}

// staleBucket answers Get of the BackupBucket with the copy it was given (a cache that has not
// seen the hand-back yet) the first stale times, and from the API server after that.
type staleBucket struct {
	client.Client

	bucket *extensionsv1alpha1.BackupBucket
	stale  int
}

func (s *staleBucket) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if bb, ok := obj.(*extensionsv1alpha1.BackupBucket); ok && s.stale > 0 {
		s.stale--
		s.bucket.DeepCopyInto(bb)
		return nil
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

// TestHoldIsNotFooledByAStaleBucket: the hand-back has released the entry (its bucket has
// handBack on the API server), but the entry is reconciled by a client whose cache still shows
// the bucket without it, or the hand-back is set between the entry's read of the bucket and its
// write of the finalizer. Either way the entry ends without the finalizer (issue 36: the cached
// read gave it back, and nothing would ever remove it again).
func TestHoldIsNotFooledByAStaleBucket(t *testing.T) {
	cases := []struct {
		name string
		// cachedClient: the actuator's client (its cache) is stale throughout; racingReader: its
		// first read of the bucket, cached or not, sees the old one (the hand-back lands right
		// after it).
		cachedClient, racingReader bool
	}{
		{name: "stale cache", cachedClient: true},
		{name: "hand-back between the read and the write", racingReader: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			k8s := controllertest.Client()
			bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket"},
				Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: controllertest.RawConfig(controllertest.Config{})}}}
			if err := k8s.Create(ctx, bb); err != nil {
				t.Fatal(err)
			}
			before := bb.DeepCopy()
			bb.Spec.ProviderConfig = controllertest.RawConfig(controllertest.Config{HandBack: true})
			bb.Status.Conditions = []gardencorev1beta1.Condition{{Type: entryinfo.ConditionHandBack, Status: gardencorev1beta1.ConditionTrue}}
			if err := k8s.Update(ctx, bb); err != nil {
				t.Fatal(err)
			}
			be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--s--1"}, Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: "bucket"}}
			if err := k8s.Create(ctx, be); err != nil {
				t.Fatal(err)
			}
			cached, reader := k8s, k8s
			if c.cachedClient {
				cached = &staleBucket{Client: k8s, bucket: before, stale: 1 << 30}
			}
			if c.racingReader {
				cached = &staleBucket{Client: k8s, bucket: before, stale: 1}
				reader = &staleBucket{Client: k8s, bucket: before, stale: 1}
			}
			a := &holdingActuator{client: cached, reader: reader, provider: provider.Register(controllertest.Provider{})}
			if err := a.hold(ctx, be); err != nil {
				t.Fatalf("hold: %v", err)
			}
			got := &extensionsv1alpha1.BackupEntry{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(be), got); err != nil {
				t.Fatal(err)
			}
			if slices.Contains(got.Finalizers, entryinfo.FinalizerName) {
				t.Fatalf("finalizers %v: the entry of a handed-back bucket is held by %s", got.Finalizers, entryinfo.FinalizerName)
			}
		})
	}
}
