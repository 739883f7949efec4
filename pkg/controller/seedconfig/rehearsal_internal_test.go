// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package seedconfig

import (
	"context"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestARehearsalAsksNoObjectToReconcile: after a change of the configuration in force, the
// controller annotates the BackupBuckets and BackupEntries of its type, except in a rehearsal,
// where they are the incumbent's.
func TestARehearsalAsksNoObjectToReconcile(t *testing.T) {
	for _, rehearsal := range []bool{false, true} {
		scheme := runtime.NewScheme()
		_ = extensionsv1alpha1.AddToScheme(scheme)
		patches := 0
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
			&extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}}},
			&extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--a--1"}, Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}}},
		).WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			patches++
			return c.Patch(ctx, obj, patch, opts...)
		}}).Build()
		seeded, err := provider.WithSeedConfig(provider.Register(controllertest.Provider{}), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		a := &actuator{seeded: seeded, client: c, rehearsal: rehearsal}
		if err := a.changed(context.Background(), logr.Discard(), pendingKey); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 2, true: 0}[rehearsal]; patches != want {
			t.Fatalf("rehearsal %v: %d objects asked to reconcile; want %d", rehearsal, patches, want)
		}
	}
}

// TestTheSwitchRemovesTheRehearsalCondition: the rehearsal's condition on the seed's Extension
// is removed by the controllers' first apply after the switch, and kept by a rehearsal's.
func TestTheSwitchRemovesTheRehearsalCondition(t *testing.T) {
	for _, rehearsal := range []bool{false, true} {
		scheme := runtime.NewScheme()
		_ = extensionsv1alpha1.AddToScheme(scheme)
		ex := &extensionsv1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: "backup-mem"}}
		ex.Status.Conditions = []gardencorev1beta1.Condition{
			{Type: ConditionRehearsal, Status: gardencorev1beta1.ConditionTrue, Reason: "AllAdoptable"},
			{Type: "Other", Status: gardencorev1beta1.ConditionTrue},
		}
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ex).WithStatusSubresource(ex).Build()
		seeded, err := provider.WithSeedConfig(provider.Register(controllertest.Provider{}), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		a := &actuator{seeded: seeded, client: c, rehearsal: rehearsal}
		if err := a.record(context.Background(), ex, nil); err != nil {
			t.Fatal(err)
		}
		got := &extensionsv1alpha1.Extension{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(ex), got); err != nil {
			t.Fatal(err)
		}
		var types []gardencorev1beta1.ConditionType
		for _, cond := range got.Status.Conditions {
			types = append(types, cond.Type)
		}
		want := map[bool]int{false: 1, true: 2}[rehearsal]
		if len(types) != want || types[len(types)-1] != "Other" {
			t.Fatalf("rehearsal %v: conditions %v; want %d, Other kept", rehearsal, types, want)
		}
	}
}
