// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"bytes"
	"maps"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

// HandBackFlow hands back a bucket whose generated credential a shoot holds, as an operator and
// gardenlet do (docs/migrating.md, rolling back), with the provider's real issuer: generation is
// switched off (Retiring, the credential still valid); the hand-back (handBack, the providerConfig
// g.HandBack) is refused with ERR_CONFIGURATION_PROBLEM naming the entry's secret while the
// entry holds the generated credential, which still writes; once gardenlet has given the entry
// the operator's credentials and its reconcile has rewritten etcd-backup, the hand-back
// succeeds at once (not after the retirement's week), the condition says Retired, and the
// generated credential is refused by the store while the operator's still works.
func (e *Env) HandBackFlow(t *testing.T, g GeneratedCredentials) {
	t.Helper()
	bb := e.CreateBucket(t, UniqueName("hb-"), g.Operator, g.Config)
	e.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", Succeeded)
	cred := e.generated(t, bb.Name)
	shoot := UniqueName("shoot--hb--")
	e.EnsureNamespace(t, shoot)
	be := e.CreateEntry(t, shoot+"--1", bb.Name, cred.Data)
	e.WaitFor(t, be, time.Minute, "entry reconciled", Succeeded)

	e.setProviderConfig(t, bb, g.Off)
	e.WaitFor(t, bb, time.Minute, "bucket reconciled without generation", SucceededAfter(time.Now()))
	e.assertCondition(t, bb, gardencorev1beta1.ConditionFalse, "Retiring")
	operatorCopy := e.generated(t, bb.Name)

	e.setProviderConfig(t, bb, g.HandBack)
	e.WaitFor(t, bb, time.Minute, "hand-back refused", FailedWith(gardencorev1beta1.ErrorConfigurationProblem))
	if le := bb.Status.LastError; !strings.Contains(le.Description, "garden/entry-"+be.Name) || !strings.Contains(le.Description, shoot+"/etcd-backup") {
		t.Fatalf("the refusal does not name the entry's secrets: %q", le.Description)
	}
	if err := e.StoreFor(t, cred.Data).PutObject(Ctx(t), bb.Name, shoot+"--1/refused", []byte("x")); err != nil {
		t.Fatalf("the generated credential was revoked by a refused hand-back: %v", err)
	}

	// gardenlet gives the entry the operator's credentials (the copy the generated secret holds),
	// and the entry's reconcile writes them into etcd-backup.
	entrySecret := &corev1.Secret{}
	if err := e.K8s.Get(Ctx(t), client.ObjectKey{Namespace: be.Spec.SecretRef.Namespace, Name: be.Spec.SecretRef.Name}, entrySecret); err != nil {
		t.Fatal(err)
	}
	entrySecret.Data = operatorCopy.Data
	if err := e.K8s.Update(Ctx(t), entrySecret); err != nil {
		t.Fatal(err)
	}
	e.Trigger(t, be)
	e.WaitFor(t, be, time.Minute, "entry reconciled with the operator's credentials", SucceededAfter(time.Now()))
	_, etcdBackup := e.SecretKeys(t, shoot, "etcd-backup")
	for k, v := range etcdBackup.Data {
		if c, ok := cred.Data[k]; ok && bytes.Equal(c, v) && !bytes.Equal(g.Operator[k], v) {
			t.Fatalf("etcd-backup still carries the generated credential's %q", k)
		}
	}

	e.Trigger(t, bb)
	e.WaitFor(t, bb, time.Minute, "hand-back", SucceededAfter(time.Now()))
	e.assertCondition(t, bb, gardencorev1beta1.ConditionFalse, "Retired")
	retired, err := e.GeneratedSecret(t, bb.Name)
	if err != nil {
		t.Fatal(err)
	}
	if credentialOf(retired) != "" || !maps.EqualFunc(retired.Data, g.Operator, bytes.Equal) {
		t.Fatalf("after the hand-back the generated secret records %v; want the operator's credentials and no generated one", retired.Annotations)
	}
	if err := e.StoreFor(t, cred.Data).PutObject(Ctx(t), bb.Name, shoot+"--1/handed-back", []byte("x")); !conformance.Refused(err) {
		t.Fatalf("the generated credential still writes after the hand-back: %v", err)
	}
	if err := e.StoreFor(t, g.Operator).PutObject(Ctx(t), bb.Name, shoot+"--1/operator", []byte("x")); err != nil {
		t.Fatalf("the operator's credentials after the hand-back: %v", err)
	}
	e.DeleteAndWaitGone(t, be, 2*time.Minute)
	e.DeleteAndWaitGone(t, bb, 2*time.Minute)
}

// setProviderConfig replaces the bucket's providerConfig and asks for its reconcile.
func (e *Env) setProviderConfig(t *testing.T, bb *extensionsv1alpha1.BackupBucket, providerConfig string) {
	t.Helper()
	patch := client.MergeFrom(bb.DeepCopy())
	bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(providerConfig)}
	if err := e.K8s.Patch(Ctx(t), bb, patch); err != nil {
		t.Fatal(err)
	}
	e.Trigger(t, bb) // waits for the next second: statuses before it are older than now
}
