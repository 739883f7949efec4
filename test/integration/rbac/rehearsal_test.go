// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package rbac_test

import (
	"context"
	"strings"
	"testing"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/rehearsal"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestRehearsalChartRBAC: under the RBAC of the chart with rehearse: true, a rehearsal reads
// the seed's BackupBuckets, BackupEntries and secrets, writes its ConfigMap and its condition on
// the seed's Extension, and nothing it reads may be written: an update of the BackupBucket, of
// its status and of a secret is forbidden.
func TestRehearsalChartRBAC(t *testing.T) {
	ctx := context.Background()
	env, cfg, err := stack.StartEnvtest()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	scheme, err := app.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "backup-operator"}, Data: map[string][]byte{"any": []byte("x")}}
	bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: "rehearsal-rbac"},
		Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws"}, Region: "r", SecretRef: corev1.SecretReference{Namespace: "garden", Name: "backup-operator"}}}
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--a--1"},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws"}, Region: "r", BucketName: bb.Name, SecretRef: bb.Spec.SecretRef}}
	ex := &extensionsv1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "backup-aws"},
		Spec: extensionsv1alpha1.ExtensionSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "backup-aws"}}}
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}, secret, bb, be, ex} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	rehearsing, err := chartIdentityOf(map[string]any{"provider": "aws", "rehearse": true}, nil)(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(rehearsing, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	store := memstore.New(100)
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: bb.Name}); err != nil {
		t.Fatal(err)
	}
	r := &rehearsal.Rehearser{Provider: provider.Register(memProvider{store}), Reader: c, Client: c, Log: logr.Discard(),
		Options: rehearsal.Options{Namespace: namespace, Name: "gardener-extension-backup-aws-rehearsal", Inventory: entryinventory.DefaultOptions()}}
	if err := r.Once(ctx); err != nil {
		t.Fatalf("a rehearsal under the chart's RBAC: %v", err)
	}
	reports, err := r.Rehearse(ctx, metav1.Now().Time)
	if err != nil {
		t.Fatal(err)
	}
	for _, rep := range reports {
		if strings.Contains(strings.ToLower(rep.Reason), "forbidden") {
			t.Errorf("%s %s: %s", rep.Kind, rep.Name, rep.Reason)
		}
		for _, check := range rep.Checks {
			if strings.Contains(strings.ToLower(check.Message), "forbidden") {
				t.Errorf("%s %s, check %s: %s", rep.Kind, rep.Name, check.Name, check.Message)
			}
		}
	}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(ex), ex); err != nil {
		t.Fatal(err)
	}
	if v1beta1helper.GetCondition(ex.Status.Conditions, rehearsal.ConditionRehearsal) == nil {
		t.Fatal("no Rehearsal condition on the seed's Extension")
	}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "gardener-extension-backup-aws-rehearsal"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("the rehearsal's ConfigMap: %v", err)
	}

	if err := c.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
		t.Fatal(err)
	}
	bb.Annotations = map[string]string{"gardener.cloud/operation": "reconcile"}
	if err := c.Update(ctx, bb); !apierrors.IsForbidden(err) {
		t.Errorf("an update of the BackupBucket under the rehearsal's RBAC: %v; want forbidden", err)
	}
	if err := c.Status().Update(ctx, bb); !apierrors.IsForbidden(err) {
		t.Errorf("an update of the BackupBucket's status under the rehearsal's RBAC: %v; want forbidden", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
		t.Fatal(err)
	}
	secret.Data["any"] = []byte("y")
	if err := c.Update(ctx, secret); !apierrors.IsForbidden(err) {
		t.Errorf("an update of a secret under the rehearsal's RBAC: %v; want forbidden", err)
	}
}
