// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"bytes"
	"maps"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

// GeneratedCredentials describes a provider's generated credentials for GeneratedCredentialsFlow.
type GeneratedCredentials struct {
	// Operator is the operator's credentials secret data.
	Operator map[string][]byte
	// Config is a BackupBucket providerConfig that asks for generated credentials; Off one that
	// does not.
	Config, Off string
	// HandBack is Off with handBack: true (HandBackFlow).
	HandBack string
}

// credentialOf is the published credential's ID the generated secret records.
func credentialOf(s *corev1.Secret) string { return s.Annotations[backupbucket.AnnotationCredential] }

// GeneratedCredentialsFlow drives a bucket with generated credentials as gardenlet does and checks
// what a shoot sees: the credential is published (status and condition), an entry with it writes
// etcd-backup and deletes exactly its prefix, a requested rotation publishes a new one while the
// previous stays valid, bucket deletion revokes both and deletes the secret. A second bucket then
// has generation switched off: its reference is cleared at once, its credential revoked and its
// secret deleted once the retirement is due.
func (e *Env) GeneratedCredentialsFlow(t *testing.T, g GeneratedCredentials) {
	t.Helper()
	bb := e.CreateBucket(t, UniqueName("gen-"), g.Operator, g.Config)
	e.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", Succeeded)
	if bb.Status.GeneratedSecretRef == nil || bb.Status.GeneratedSecretRef.Name != "generated-bucket-"+bb.Name {
		t.Fatalf("status.generatedSecretRef = %v", bb.Status.GeneratedSecretRef)
	}
	e.assertCondition(t, bb, gardencorev1beta1.ConditionTrue, "Published")
	first := e.generated(t, bb.Name)

	// The shoot's entry gets the generated credential (gardenlet copies it), and its deletion
	// works with it and keeps the neighbour.
	shoot := UniqueName("shoot--gen--")
	e.EnsureNamespace(t, shoot)
	be := e.CreateEntry(t, shoot+"--1", bb.Name, first.Data)
	e.WaitFor(t, be, time.Minute, "entry reconciled", Succeeded)
	_, etcdBackup := e.SecretKeys(t, shoot, "etcd-backup")
	for k, v := range etcdBackup.Data {
		if op, ok := g.Operator[k]; ok && string(op) == string(v) && string(first.Data[k]) != string(v) {
			t.Fatalf("etcd-backup carries the operator's %q instead of the generated credential's", k)
		}
	}
	scoped := e.StoreFor(t, first.Data)
	neighbours := FillEntry(t, scoped, bb.Name, shoot+"--1/", 100)
	e.DeleteAndWaitGone(t, be, 2*time.Minute)
	AssertOnly(t, scoped, bb.Name, neighbours)

	// A requested rotation publishes a new credential; the previous one stays valid (grace).
	e.Trigger(t, bb, backupbucket.AnnotationRotateCredentials, "r1")
	second := e.generated(t, bb.Name)
	for deadline := time.Now().Add(time.Minute); credentialOf(second) == credentialOf(first); second = e.generated(t, bb.Name) {
		if time.Now().After(deadline) {
			t.Fatal("the rotation published no new credential")
		}
		time.Sleep(200 * time.Millisecond)
	}
	for what, d := range map[string]map[string][]byte{"previous (in its grace period)": first.Data, "new": second.Data} {
		if err := e.StoreFor(t, d).PutObject(Ctx(t), bb.Name, "shoot--gen--x/"+credentialOf(second), []byte("x")); err != nil {
			t.Fatalf("the %s credential does not write: %v", what, err)
		}
	}

	// Bucket deletion revokes every generated credential and deletes the secret.
	e.DeleteAndWaitGone(t, bb, 2*time.Minute)
	if _, err := e.GeneratedSecret(t, bb.Name); !apierrors.IsNotFound(err) {
		t.Fatalf("generated secret after the bucket's deletion: %v", err)
	}
	for _, d := range []map[string][]byte{first.Data, second.Data} {
		if err := e.StoreFor(t, d).PutObject(Ctx(t), bb.Name, "x", []byte("x")); !conformance.Refused(err) {
			t.Errorf("a generated credential survived its bucket: %v", err)
		}
	}

	// Switching generation off: the secret under the reference holds the operator's credentials
	// at once (gardenlet keeps handing it to the entries), the generated one is revoked when its
	// retirement is due.
	off := e.CreateBucket(t, UniqueName("gen-off-"), g.Operator, g.Config)
	e.WaitFor(t, off, 2*time.Minute, "bucket reconciled", Succeeded)
	cred := e.generated(t, off.Name)
	patch := client.MergeFrom(off.DeepCopy())
	off.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(g.Off)}
	if err := e.K8s.Patch(Ctx(t), off, patch); err != nil {
		t.Fatal(err)
	}
	e.Trigger(t, off) // waits for the next second: statuses before it are older than now
	e.WaitFor(t, off, time.Minute, "bucket reconciled without generation", SucceededAfter(time.Now()))
	if ref := off.Status.GeneratedSecretRef; ref == nil || ref.Name != cred.Name || ref.Namespace != cred.Namespace {
		t.Fatalf("status.generatedSecretRef = %v after generation was switched off; want it kept (gardenlet never clears it)", ref)
	}
	e.assertCondition(t, off, gardencorev1beta1.ConditionFalse, "Retiring")
	retiring := e.generated(t, off.Name)
	if retiring.Annotations[backupbucket.AnnotationRetireAfter] == "" {
		t.Fatal("the generated secret records no retirement")
	}
	if !maps.EqualFunc(retiring.Data, g.Operator, bytes.Equal) {
		t.Fatal("the secret under the reference does not hold the operator's credentials while retiring")
	}
	if err := e.StoreFor(t, cred.Data).PutObject(Ctx(t), off.Name, "shoot--gen--y/retiring", []byte("x")); err != nil {
		t.Fatalf("the generated credential was revoked before its retirement was due: %v", err)
	}
	// Time passes: the retirement is due.
	patchSecret := client.MergeFrom(retiring.DeepCopy())
	retiring.Annotations[backupbucket.AnnotationRetireAfter] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	if err := e.K8s.Patch(Ctx(t), retiring, patchSecret); err != nil {
		t.Fatal(err)
	}
	e.Trigger(t, off)
	e.WaitFor(t, off, time.Minute, "bucket reconciled after the retirement", SucceededAfter(time.Now()))
	e.assertCondition(t, off, gardencorev1beta1.ConditionFalse, "Retired")
	retired, err := e.GeneratedSecret(t, off.Name)
	if err != nil {
		t.Fatalf("the secret under the reference after the retirement: %v", err)
	}
	if !maps.EqualFunc(retired.Data, g.Operator, bytes.Equal) || retired.Annotations[backupbucket.AnnotationCredential] != "" {
		t.Fatalf("after the retirement the secret under the reference records %v; want the operator's credentials and no generated one", retired.Annotations)
	}
	if err := e.StoreFor(t, cred.Data).PutObject(Ctx(t), off.Name, "shoot--gen--y/retired", []byte("x")); !conformance.Refused(err) {
		t.Fatalf("a retired generated credential still writes: %v", err)
	}
	if err := e.StoreFor(t, g.Operator).PutObject(Ctx(t), off.Name, "shoot--gen--y/operator", []byte("x")); err != nil {
		t.Fatalf("the operator's credentials after the retirement: %v", err)
	}
	e.DeleteAndWaitGone(t, off, 2*time.Minute)
}

func (e *Env) generated(t *testing.T, bucket string) *corev1.Secret {
	t.Helper()
	s, err := e.GeneratedSecret(t, bucket)
	if err != nil {
		t.Fatal(err)
	}
	if credentialOf(s) == "" {
		t.Fatalf("generated secret of %s records no credential", bucket)
	}
	return s
}

func (e *Env) assertCondition(t *testing.T, bb *extensionsv1alpha1.BackupBucket, status gardencorev1beta1.ConditionStatus, reason string) {
	t.Helper()
	c := v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionGeneratedCredentials)
	if c == nil || c.Status != status || c.Reason != reason {
		t.Fatalf("condition %s = %+v; want %s/%s", backupbucket.ConditionGeneratedCredentials, c, status, reason)
	}
}
