// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket_test

import (
	"context"
	"strings"
	"testing"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
)

// TestCopyRecordFollowsTheConfiguration: the reconcile records the copy's secret version it read
// and the copy bucket it converged; a copy bucket `copy:` no longer names is reported while it
// holds objects, and its record ends when it is empty or named again.
func TestCopyRecordFollowsTheConfiguration(t *testing.T) {
	ctx := context.Background()
	k8s := clientWithStatus(t)
	bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "bucket"}, Spec: extensionsv1alpha1.BackupBucketSpec{SecretRef: controllertest.SecretRef}}
	declare := func(bucketName string) {
		t.Helper()
		cfg := controllertest.Config{}
		if bucketName != "" {
			cfg.Copy = &copystore.Settings{CredentialsRef: "backup-copy", BucketName: bucketName}
		}
		bb.Spec.ProviderConfig = controllertest.RawConfig(cfg)
	}
	declare("first-copy")
	if err := k8s.Create(ctx, bb); err != nil {
		t.Fatal(err)
	}
	mem := controllertest.Bucket(t, "bucket")
	recorder := events.NewFakeRecorder(50)
	a := newActuator(k8s, mem, recorder)
	reconcile := func(bucketName string) backupbucket.ProviderStatus {
		t.Helper()
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
			t.Fatal(err)
		}
		declare(bucketName)
		if err := k8s.Update(ctx, bb); err != nil {
			t.Fatal(err)
		}
		if err := a.Reconcile(ctx, logr.Discard(), bb); err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
			t.Fatal(err)
		}
		ps, err := backupbucket.ReadProviderStatus(bb)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	former := func() *gardencorev1beta1.Condition {
		return v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionFormerCopyBucketsEmpty)
	}

	if ps := reconcile("first-copy"); ps.Copy != nil || ps.CopySecretVersion == nil || *ps.CopySecretVersion != "" {
		t.Fatalf("without the copy's secret: %+v; want no copy converged and the secret recorded missing", ps)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}, Data: map[string][]byte{"key": []byte("copy")}}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if ps := reconcile("first-copy"); ps.Copy == nil || ps.Copy.Bucket != "first-copy" || ps.CopySecretVersion == nil || *ps.CopySecretVersion != secret.ResourceVersion {
		t.Fatalf("with the secret: %+v; want the copy first-copy and the secret's version %s", ps, secret.ResourceVersion)
	}
	if err := mem.PutObject(ctx, "first-copy", "shoot--a--b--1/etcd-main/v2/Full-00000000-00000001-1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	ps := reconcile("second-copy")
	if ps.Copy == nil || ps.Copy.Bucket != "second-copy" || len(ps.FormerCopies) != 1 || ps.FormerCopies[0].Bucket != "first-copy" {
		t.Fatalf("after bucketName changed: %+v", ps)
	}
	if c := former(); c == nil || c.Status != gardencorev1beta1.ConditionFalse || c.Reason != backupbucket.ReasonFormerCopyHoldsObjects ||
		!strings.Contains(c.Message, `"first-copy"`) || !strings.Contains(c.Message, "Full-00000000-00000001-1") {
		t.Fatalf("FormerCopyBucketsEmpty %+v; want False naming first-copy and its key", c)
	}
	if ev := drain(recorder); !strings.Contains(ev, "Warning "+backupbucket.ReasonFormerCopyBucket) {
		t.Errorf("events %q; want a %s warning", ev, backupbucket.ReasonFormerCopyBucket)
	}

	// Copy removed: second-copy (empty) is forgotten at once; first-copy still reported.
	ps = reconcile("")
	if ps.Copy != nil || len(ps.FormerCopies) != 1 || ps.FormerCopies[0].Bucket != "first-copy" {
		t.Fatalf("after copy removed: %+v", ps)
	}
	if ev := drain(recorder); !strings.Contains(ev, backupbucket.ReasonFormerCopyBucketForgotten) || !strings.Contains(ev, "second-copy") {
		t.Errorf("events %q; want second-copy forgotten", ev)
	}
	// first-copy named again: it is the copy, no former one left.
	ps = reconcile("first-copy")
	if ps.Copy == nil || ps.Copy.Bucket != "first-copy" || len(ps.FormerCopies) != 0 || former() != nil {
		t.Fatalf("after first-copy named again: %+v, %+v", ps, former())
	}
}
