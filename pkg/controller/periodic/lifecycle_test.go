// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package periodic_test

import (
	"context"
	"slices"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
)

const (
	verdict gardencorev1beta1.ConditionType = "Verdict"
	extra   gardencorev1beta1.ConditionType = "Extra"
	others  gardencorev1beta1.ConditionType = "SomeoneElses"
)

// lifecycleCase is one BackupEntry with the three conditions and a providerStatus, and what
// Reconcile did with it.
type lifecycleCase struct {
	t                  *testing.T
	c                  client.Client
	recorder           *events.FakeRecorder
	forgot, gone       []string
	looked             int
	lifecycle          periodic.Lifecycle[*extensionsv1alpha1.BackupEntry]
	deps               periodic.Deps
	deleting, isSource bool
}

func newLifecycleCase(t *testing.T, deleting, isSource bool) *lifecycleCase {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = extensionsv1alpha1.AddToScheme(scheme)
	now := metav1.NewTime(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "e"}}
	if deleting {
		be.Finalizers = []string{"test"}
	}
	for _, ct := range []gardencorev1beta1.ConditionType{verdict, extra, others} {
		be.Status.Conditions = append(be.Status.Conditions, gardencorev1beta1.Condition{Type: ct, Status: gardencorev1beta1.ConditionTrue, Reason: "Fine", LastUpdateTime: now, LastTransitionTime: now})
	}
	be.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(`{"ours":1}`)}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(be).WithStatusSubresource(be).Build()
	if deleting {
		if err := c.Delete(context.Background(), be); err != nil {
			t.Fatal(err)
		}
	}
	lc := &lifecycleCase{t: t, c: c, recorder: events.NewFakeRecorder(10), deleting: deleting, isSource: isSource}
	lc.deps = periodic.Deps{Client: c, Reader: c, Recorder: lc.recorder, Clock: clocktesting.NewFakeClock(now.Time)}
	lc.lifecycle = periodic.Lifecycle[*extensionsv1alpha1.BackupEntry]{
		Conditions:    []gardencorev1beta1.ConditionType{verdict, extra},
		Deleting:      func(be *extensionsv1alpha1.BackupEntry) string { return be.Name + " is being deleted" },
		DeletingEvent: "VerdictUnknown",
		Drop: func(be *extensionsv1alpha1.BackupEntry) bool {
			if be.Status.ProviderStatus == nil {
				return false
			}
			be.Status.ProviderStatus = nil
			return true
		},
		Forget: func(name string) { lc.forgot = append(lc.forgot, name) },
		Gone:   func(name string) { lc.gone = append(lc.gone, name) },
		Skip:   func(*extensionsv1alpha1.BackupEntry) bool { return lc.isSource },
	}
	return lc
}

func (lc *lifecycleCase) reconcile(name string, interval time.Duration) (*extensionsv1alpha1.BackupEntry, reconcile.Result) {
	lc.t.Helper()
	res, err := periodic.Reconcile(context.Background(), lc.deps, reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}, &extensionsv1alpha1.BackupEntry{}, interval, lc.lifecycle,
		func(context.Context, *extensionsv1alpha1.BackupEntry) (reconcile.Result, error) {
			lc.looked++
			return reconcile.Result{RequeueAfter: time.Minute}, nil
		})
	if err != nil {
		lc.t.Fatalf("reconcile: %v", err)
	}
	be := &extensionsv1alpha1.BackupEntry{}
	if err := lc.c.Get(context.Background(), client.ObjectKey{Name: "e"}, be); err != nil {
		lc.t.Fatal(err)
	}
	return be, res
}

func conditionTypes(be *extensionsv1alpha1.BackupEntry) []gardencorev1beta1.ConditionType {
	var out []gardencorev1beta1.ConditionType
	for _, c := range be.Status.Conditions {
		out = append(out, c.Type)
	}
	return out
}

// Reconcile takes back what a periodic controller published, by its Lifecycle, and hands only a
// live object to its look: switched off, its conditions and its status go (another writer's
// stay); being deleted, its verdict turns Unknown/Deleting once (one event, a second look writes
// nothing) and its other conditions go while its status stays; a skipped or gone object is
// forgotten. Each forgets the object's series.
func TestReconcileTakesBackWhatTheControllerPublished(t *testing.T) {
	t.Run("switched off", func(t *testing.T) {
		lc := newLifecycleCase(t, false, false)
		be, res := lc.reconcile("e", 0)
		if got := conditionTypes(be); !slices.Equal(got, []gardencorev1beta1.ConditionType{others}) || be.Status.ProviderStatus != nil || lc.looked != 0 || res.RequeueAfter != 0 {
			t.Fatalf("conditions %v, providerStatus %v, %d looks, requeue %s", got, be.Status.ProviderStatus, lc.looked, res.RequeueAfter)
		}
		if !slices.Equal(lc.forgot, []string{"e"}) {
			t.Errorf("forgot %v", lc.forgot)
		}
		version := be.ResourceVersion
		if be, _ = lc.reconcile("e", 0); be.ResourceVersion != version {
			t.Error("a second look wrote again")
		}
	})
	t.Run("being deleted", func(t *testing.T) {
		lc := newLifecycleCase(t, true, false)
		be, _ := lc.reconcile("e", time.Hour)
		v := v1beta1helper.GetCondition(be.Status.Conditions, verdict)
		if v == nil || v.Status != gardencorev1beta1.ConditionUnknown || v.Reason != periodic.ReasonDeleting || v.Message != "e is being deleted" {
			t.Fatalf("verdict %+v", v)
		}
		if got := conditionTypes(be); !slices.Equal(got, []gardencorev1beta1.ConditionType{verdict, others}) || be.Status.ProviderStatus == nil || lc.looked != 0 {
			t.Fatalf("conditions %v, providerStatus %v, %d looks", got, be.Status.ProviderStatus, lc.looked)
		}
		if len(lc.recorder.Events) != 1 || !slices.Equal(lc.forgot, []string{"e"}) {
			t.Fatalf("%d events, forgot %v", len(lc.recorder.Events), lc.forgot)
		}
		<-lc.recorder.Events
		version := be.ResourceVersion
		if be, _ = lc.reconcile("e", time.Hour); be.ResourceVersion != version || len(lc.recorder.Events) != 0 {
			t.Errorf("a second look wrote again or emitted %d events", len(lc.recorder.Events))
		}
	})
	t.Run("skipped", func(t *testing.T) {
		lc := newLifecycleCase(t, false, true)
		be, _ := lc.reconcile("e", time.Hour)
		if len(be.Status.Conditions) != 3 || lc.looked != 0 || !slices.Equal(lc.forgot, []string{"e"}) {
			t.Fatalf("conditions %v, %d looks, forgot %v", conditionTypes(be), lc.looked, lc.forgot)
		}
	})
	t.Run("gone", func(t *testing.T) {
		lc := newLifecycleCase(t, false, false)
		lc.reconcile("gone", time.Hour)
		if !slices.Equal(lc.gone, []string{"gone"}) || lc.forgot != nil || lc.looked != 0 {
			t.Fatalf("gone %v, forgot %v, %d looks", lc.gone, lc.forgot, lc.looked)
		}
	})
	t.Run("live", func(t *testing.T) {
		lc := newLifecycleCase(t, false, false)
		if be, res := lc.reconcile("e", time.Hour); lc.looked != 1 || res.RequeueAfter != time.Minute || len(be.Status.Conditions) != 3 || lc.forgot != nil {
			t.Fatalf("%d looks, requeue %s, conditions %v, forgot %v", lc.looked, res.RequeueAfter, conditionTypes(be), lc.forgot)
		}
	})
}
