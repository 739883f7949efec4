// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package extstatus_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
)

func TestPatchKeepsOtherWritersConditionsAndTheCallersSpec(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = extensionsv1alpha1.AddToScheme(scheme)
	bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "b", Generation: 1}, Spec: extensionsv1alpha1.BackupBucketSpec{Region: "one"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(bb).WithStatusSubresource(bb).Build()
	stale := &extensionsv1alpha1.BackupBucket{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(bb), stale); err != nil {
		t.Fatal(err)
	}

	// Another writer sets its condition and the spec changes after stale was read.
	other := stale.DeepCopy()
	other.Status.Conditions, _ = extstatus.SetCondition(nil, "Other", gardencorev1beta1.ConditionTrue, "Set", "", time.Now())
	if err := c.Status().Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(bb), other); err != nil {
		t.Fatal(err)
	}
	other.Spec.Region = "two"
	if err := c.Update(ctx, other); err != nil {
		t.Fatal(err)
	}

	err := extstatus.Patch(ctx, c, c, stale, func(b *extensionsv1alpha1.BackupBucket) bool {
		b.Status.Conditions, _ = extstatus.SetCondition(b.Status.Conditions, "Mine", gardencorev1beta1.ConditionFalse, "Set", "", time.Now())
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	stored := &extensionsv1alpha1.BackupBucket{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(bb), stored); err != nil {
		t.Fatal(err)
	}
	for _, ct := range []gardencorev1beta1.ConditionType{"Other", "Mine"} {
		if v1beta1helper.GetCondition(stored.Status.Conditions, ct) == nil {
			t.Errorf("condition %s lost: %+v", ct, stored.Status.Conditions)
		}
	}
	if stale.Spec.Region != "one" || v1beta1helper.GetCondition(stale.Status.Conditions, "Mine") == nil {
		t.Errorf("the caller's object: region %q (want its own, one), conditions %+v (want Mine)", stale.Spec.Region, stale.Status.Conditions)
	}
}

func TestEventNoteFitsTheAPIServersLimit(t *testing.T) {
	long := strings.Repeat("ä", 600) // 1200 bytes, two per rune
	for _, msg := range []string{"short", long, strings.Repeat("x", 1024), strings.Repeat("x", 1025)} {
		got := extstatus.EventNote(msg)
		if len(got) > 1024 || !utf8.ValidString(got) || (len(msg) <= 1024 && got != msg) || (len(msg) > 1024 && !strings.HasSuffix(got, "[...]")) {
			t.Errorf("EventNote(%d bytes) = %d bytes, valid %v, %q...", len(msg), len(got), utf8.ValidString(got), got[max(0, len(got)-10):])
		}
	}
}
