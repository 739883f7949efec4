// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package secrets_test runs the real controllers on envtest with an in-memory store and takes
// credentials secrets away, as an operator (or a broken deletion flow) might: the extension must
// say so on the objects' status and never let an entry's objects be forgotten silently.
package secrets_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

var (
	env   *framework.Env
	store = memstore.New(100)
)

func TestMain(m *testing.M) {
	var err error
	env, err = framework.Start(controllertest.Provider{Store: store}, "local")
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		os.Exit(1)
	}
	code := m.Run()
	env.Stop()
	os.Exit(code)
}

var creds = map[string][]byte{"key": []byte("value")}

// removeSecret deletes a credentials secret, releasing the finalizer gardener's library set on
// it (which otherwise keeps it), as somebody forcing it away would.
func removeSecret(t *testing.T, ref corev1.SecretReference) {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.K8s.Get(framework.Ctx(t), client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(s.DeepCopy())
	s.Finalizers = nil
	if err := env.K8s.Patch(framework.Ctx(t), s, patch); err != nil {
		t.Fatal(err)
	}
	if err := env.K8s.Delete(framework.Ctx(t), s); err != nil {
		t.Fatal(err)
	}
}

func failedNaming(code gardencorev1beta1.ErrorCode, mention string) func(extensionsv1alpha1.Object) bool {
	return func(obj extensionsv1alpha1.Object) bool {
		le := obj.GetExtensionStatus().GetLastError()
		return le != nil && slices.Contains(le.Codes, code) && strings.Contains(le.Description, mention)
	}
}

func newBucket(t *testing.T) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	bb := env.CreateBucket(t, framework.UniqueName("bucket-"), creds, "")
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	return bb
}

func newEntry(t *testing.T, bucket string) (*extensionsv1alpha1.BackupEntry, []string) {
	t.Helper()
	be := env.CreateEntry(t, framework.UniqueName("shoot--sec--e")+"--uid", bucket, creds)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	if !slices.Contains(be.Finalizers, entryinfo.FinalizerName) {
		t.Fatalf("entry finalizers %v; want %s, which keeps it until its objects are deleted", be.Finalizers, entryinfo.FinalizerName)
	}
	// FillEntry writes the entry's objects and returns its neighbours' keys.
	return be, framework.FillEntry(t, store, bucket, be.Name+"/", 5)
}

func TestBucketWithoutSecretSaysSo(t *testing.T) {
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("bucket-"), Annotations: map[string]string{"gardener.cloud/operation": "reconcile"}},
		Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: env.Type}, Region: env.Region,
			SecretRef: corev1.SecretReference{Namespace: "garden", Name: "does-not-exist"}},
	}
	if err := env.K8s.Create(framework.Ctx(t), bb); err != nil {
		t.Fatal(err)
	}
	defer env.Forget(t, bb)
	env.WaitFor(t, bb, time.Minute, "missing secret reported", failedNaming(gardencorev1beta1.ErrorConfigurationProblem, "garden/does-not-exist"))
}

func TestEntryWhoseSecretIsGone(t *testing.T) {
	bb := newBucket(t)
	be, neighbours := newEntry(t, bb.Name)

	removeSecret(t, be.Spec.SecretRef)
	env.Trigger(t, be)
	env.WaitFor(t, be, time.Minute, "missing secret reported", failedNaming(gardencorev1beta1.ErrorConfigurationProblem, be.Spec.SecretRef.Name))

	// gardener's library drops its finalizer without deleting anything; the bucket's credentials
	// stand in, and the prefix is deleted before the entry goes.
	env.DeleteAndWaitGone(t, be, time.Minute)
	framework.AssertOnly(t, store, bb.Name, neighbours)
	if !env.EventuallyHasEvent(t, be.Name, backupentry.ReasonPrefixDeletedWithBucketSecret, be.Name+"/", 10*time.Second) {
		t.Errorf("no %s event", backupentry.ReasonPrefixDeletedWithBucketSecret)
	}
}

func TestEntryWhoseSecretAndBucketSecretAreGoneIsKept(t *testing.T) {
	bb := newBucket(t)
	be, _ := newEntry(t, bb.Name)
	objects, err := conformance.ListKeys(context.Background(), store, bb.Name, be.Name+"/")
	if err != nil || len(objects) == 0 {
		t.Fatalf("the entry holds %v, %v", objects, err)
	}
	removeSecret(t, be.Spec.SecretRef)
	removeSecret(t, bb.Spec.SecretRef)

	if err := env.K8s.Delete(framework.Ctx(t), be); err != nil {
		t.Fatal(err)
	}
	env.WaitFor(t, be, time.Minute, "kept objects reported", failedNaming(gardencorev1beta1.ErrorConfigurationProblem, "they are kept"))
	left, err := conformance.ListKeys(context.Background(), store, bb.Name, be.Name+"/")
	if err != nil || !slices.Equal(left, objects) {
		t.Fatalf("objects under the entry: %v, %v; want all %d kept", left, err, len(objects))
	}
	if !slices.Equal(be.Finalizers, []string{entryinfo.FinalizerName}) {
		t.Fatalf("finalizers %v; want only %s, holding the entry", be.Finalizers, entryinfo.FinalizerName)
	}
	// An operator who decides to leave the objects removes the finalizer.
	env.Forget(t, be)
	env.Forget(t, bb)
}
