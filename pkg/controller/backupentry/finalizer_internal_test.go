// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestReleaseRetriesAConflict: another writer (gardener's library, gardenlet) changes the entry
// between our read and the removal of our finalizer, as during a migration. The removal is
// retried on the entry read anew instead of failing an operation that succeeded.
func TestReleaseRetriesAConflict(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = extensionsv1alpha1.AddToScheme(scheme)
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--s--1", Finalizers: []string{entryinfo.FinalizerName, "other"}}}
	conflicts := 1
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(be).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if conflicts > 0 {
				conflicts--
				// Someone else writes first: our copy is stale now.
				other := &extensionsv1alpha1.BackupEntry{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), other); err != nil {
					return err
				}
				metav1.SetMetaDataAnnotation(&other.ObjectMeta, "written-by", "someone else")
				if err := c.Update(ctx, other); err != nil {
					return err
				}
				return apierrors.NewConflict(schema.GroupResource{Resource: "backupentries"}, obj.GetName(), nil)
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	}).Build()
	stale := &extensionsv1alpha1.BackupEntry{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(be), stale); err != nil {
		t.Fatal(err)
	}
	a := &holdingActuator{client: c}
	if err := a.release(ctx, stale); err != nil {
		t.Fatalf("release after a conflict = %v; want it retried", err)
	}
	got := &extensionsv1alpha1.BackupEntry{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(be), got); err != nil {
		t.Fatal(err)
	}
	if controllerutil.ContainsFinalizer(got, entryinfo.FinalizerName) || !controllerutil.ContainsFinalizer(got, "other") {
		t.Fatalf("finalizers %v; want only ours removed", got.Finalizers)
	}
	if got.Annotations["written-by"] != "someone else" {
		t.Fatalf("the other writer's change was lost: %v", got.Annotations)
	}
}

// TestHoldChangesNothingOnABucketItCannotDecode: while the provider awaits the seed's
// configuration (or the bucket's providerConfig does not decode), whether the bucket is handed
// back is unknown: hold fails with that cause and neither adds nor removes the finalizer
// (reading it as "not handed back" held the entries of a handed-back bucket again).
func TestHoldChangesNothingOnABucketItCannotDecode(t *testing.T) {
	handedBack := controllertest.RawConfig(controllertest.Config{HandBack: true})
	cases := []struct {
		name       string
		config     *runtime.RawExtension
		pending    bool
		finalizers []string
	}{
		{name: "seed configuration pending, not held", config: handedBack, pending: true},
		{name: "seed configuration pending, held", config: handedBack, pending: true, finalizers: []string{entryinfo.FinalizerName}},
		{name: "providerConfig not decodable, not held", config: &runtime.RawExtension{Raw: []byte(`{"handBack":"yes"}`)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			k8s := controllertest.Client()
			bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket"},
				Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: c.config}}}
			be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--s--1", Finalizers: c.finalizers},
				Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: "bucket"}}
			for _, o := range []client.Object{bb, be} {
				if err := k8s.Create(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
			seeded, err := provider.WithSeedConfig(provider.Register(controllertest.Provider{}), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.pending {
				seeded.Await("the seed's Extension")
			}
			a := &holdingActuator{client: k8s, reader: k8s, provider: seeded}
			err = a.hold(ctx, be)
			var pending *provider.SeedConfigPendingError
			if err == nil || errors.As(err, &pending) != c.pending {
				t.Fatalf("hold: %v; want the decoding's error (pending: %t)", err, c.pending)
			}
			got := &extensionsv1alpha1.BackupEntry{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(be), got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Finalizers, c.finalizers) {
				t.Fatalf("finalizers %v; want them unchanged, %v", got.Finalizers, c.finalizers)
			}
		})
	}
}

// TestObserveMarksTheEntryFailing: every pass of the entry's actuator is observed by the entry's
// name: a failure marks it failing (BackupReconcileFailing), a success clears it.
func TestObserveMarksTheEntryFailing(t *testing.T) {
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--failing"}}
	t.Cleanup(func() { metrics.ForgetOperation(metrics.KindBackupEntry, be.Name) })
	labels := []string{metrics.KindBackupEntry, be.Name, metrics.OperationReconcile, "ERR_INFRA_UNAUTHENTICATED"}
	_ = observe(be, metrics.OperationReconcile, lasterror.For(fmt.Errorf("listing: %w", objectstore.ErrUnauthenticated)))
	if since := testutil.ToFloat64(metrics.OperationFailingSince.WithLabelValues(labels...)); since <= 0 {
		t.Fatalf("after a failed reconcile: failing since %v; want the entry's series with its code", since)
	}
	if err := observe(be, metrics.OperationReconcile, nil); err != nil {
		t.Fatal(err)
	}
	if metrics.OperationFailingSince.DeleteLabelValues(labels...) {
		t.Fatal("after a reconcile that succeeded the entry's failing series stays")
	}
}
