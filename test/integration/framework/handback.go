// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

// HandBackFlow hands back a bucket whose generated credential a shoot holds, as an operator and
// gardenlet do (docs/migrating.md, handing back), with the provider's real issuer: generation is
// switched off (Retiring, the credential still valid); the hand-back (handBack, the providerConfig
// g.HandBack) waits -- the bucket succeeds, condition HandBack Progressing/WaitingForSecrets
// names the entry's secrets -- while the entry holds the generated credential, which still
// writes; once gardenlet has given the entry the operator's credentials and its reconcile has
// rewritten etcd-backup, it settles (the kubelet's copy: the condition's time is moved back here
// instead of waiting), then finishes by itself, without a trigger (the scheduler's next look):
// HandedBack, GeneratedCredentials Retired, and the generated credential is refused by the
// store while the operator's still works.
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
	e.WaitFor(t, bb, time.Minute, "hand-back waiting for the entry's secrets, the bucket succeeding", HandBackIs(backupbucket.ReasonHandBackSecrets))
	if c := v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionHandBack); !strings.Contains(c.Message, "garden/entry-"+be.Name) || !strings.Contains(c.Message, shoot+"/etcd-backup") {
		t.Fatalf("the waiting hand-back does not name the entry's secrets: %q", c.Message)
	}
	if err := e.StoreFor(t, cred.Data).PutObject(Ctx(t), bb.Name, shoot+"--1/refused", []byte("x")); err != nil {
		t.Fatalf("the generated credential was revoked by a waiting hand-back: %v", err)
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
	e.WaitFor(t, bb, time.Minute, "hand-back settling", HandBackIs(backupbucket.ReasonHandBackSettling))
	if err := e.StoreFor(t, cred.Data).PutObject(Ctx(t), bb.Name, shoot+"--1/settling", []byte("x")); err != nil {
		t.Fatalf("the generated credential was revoked before the kubelet's copy settled: %v", err)
	}
	e.AgeHandBack(t, bb)
	e.WaitFor(t, bb, 3*time.Minute, "hand-back finished by itself", HandBackIs(backupbucket.ReasonHandedBack))
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

// HandBackIs returns a condition that holds when the bucket's last operation succeeded and its
// condition HandBack has reason.
func HandBackIs(reason string) func(extensionsv1alpha1.Object) bool {
	return func(obj extensionsv1alpha1.Object) bool {
		bb, ok := obj.(*extensionsv1alpha1.BackupBucket)
		if !ok || !Succeeded(obj) {
			return false
		}
		c := v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionHandBack)
		return c != nil && c.Reason == reason
	}
}

// AgeHandBack moves the time a Settling HandBack condition of bb was written back by the
// hand-back's settling time, as its passing does.
func (e *Env) AgeHandBack(t *testing.T, bb *extensionsv1alpha1.BackupBucket) {
	t.Helper()
	AgeHandBackOn(t, e.K8s, bb)
}

// AgeHandBackOn is AgeHandBack on the API server c.
func AgeHandBackOn(t *testing.T, c client.Client, bb *extensionsv1alpha1.BackupBucket) {
	t.Helper()
	if err := c.Get(Ctx(t), client.ObjectKeyFromObject(bb), bb); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFromWithOptions(bb.DeepCopy(), client.MergeFromWithOptimisticLock{})
	i := slices.IndexFunc(bb.Status.Conditions, func(c gardencorev1beta1.Condition) bool { return c.Type == backupbucket.ConditionHandBack })
	if i < 0 || bb.Status.Conditions[i].Reason != backupbucket.ReasonHandBackSettling {
		t.Fatalf("conditions %+v; want %s Settling", bb.Status.Conditions, backupbucket.ConditionHandBack)
	}
	at := bb.Status.Conditions[i].LastUpdateTime.Add(-backupbucket.HandBackSettle)
	bb.Status.Conditions[i].LastUpdateTime = metav1.NewTime(at)
	if err := c.Status().Patch(Ctx(t), bb, patch); err != nil {
		t.Fatal(err)
	}
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
