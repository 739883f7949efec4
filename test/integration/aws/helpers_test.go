package aws_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const region = "eu-central-1"

// minioConfig is the providerConfig an operator of MinIO sets: MinIO implements neither the
// public access block nor multipart-abort lifecycle rules.
const minioConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return c
}

func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	err := k8s.Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func createSecret(t *testing.T, namespace, name string, data map[string][]byte) corev1.SecretReference {
	t.Helper()
	ensureNamespace(t, namespace)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}
	if err := k8s.Create(ctx(t), s); err != nil {
		t.Fatal(err)
	}
	return corev1.SecretReference{Namespace: namespace, Name: name}
}

// secretData returns MinIO credentials reaching MinIO through endpoint.
func secretData(endpoint string, kv ...string) map[string][]byte {
	d := minio.SecretData()
	d["endpoint"] = []byte(endpoint)
	delete(d, "region")
	for i := 0; i+1 < len(kv); i += 2 {
		d[kv[i]] = []byte(kv[i+1])
	}
	return d
}

var operationReconcile = map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile}

func createBucket(t *testing.T, name string, data map[string][]byte, providerConfig string) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: operationReconcile},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws"},
			Region:      region,
			SecretRef:   createSecret(t, "garden", "bucket-"+name, data),
		},
	}
	if providerConfig != "" {
		bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(providerConfig)}
	}
	if err := k8s.Create(ctx(t), bb); err != nil {
		t.Fatal(err)
	}
	return bb
}

func createEntry(t *testing.T, name, bucket string, data map[string][]byte) *extensionsv1alpha1.BackupEntry {
	t.Helper()
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: operationReconcile},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws"},
			Region:      region,
			BucketName:  bucket,
			SecretRef:   createSecret(t, "garden", "entry-"+name, data),
		},
	}
	if err := k8s.Create(ctx(t), be); err != nil {
		t.Fatal(err)
	}
	return be
}

// trigger sets the operation annotation, as gardenlet does to request a reconcile. It first
// waits past the current second, so that the status of the reconcile it causes carries a later
// lastUpdateTime (kept to the second) than any status before it: see succeededAfter.
func trigger(t *testing.T, obj client.Object) {
	t.Helper()
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	obj.SetAnnotations(map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile})
	// An object that is already gone (a retry beat the trigger) is left to the caller's wait.
	if err := k8s.Patch(ctx(t), obj, patch); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

// waitFor polls obj until cond holds, and fails with the object's last status otherwise.
func waitFor(t *testing.T, obj extensionsv1alpha1.Object, timeout time.Duration, what string, cond func(extensionsv1alpha1.Object) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj)
		if err == nil && cond(obj) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s (get: %v); status: %s", what, timeout, err, describe(obj))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func describe(obj extensionsv1alpha1.Object) string {
	st := obj.GetExtensionStatus()
	var b strings.Builder
	if op := st.GetLastOperation(); op != nil {
		fmt.Fprintf(&b, "lastOperation %s/%s %q", op.Type, op.State, op.Description)
	}
	if le := st.GetLastError(); le != nil {
		fmt.Fprintf(&b, "; lastError %q codes %v", le.Description, le.Codes)
	}
	return b.String()
}

func succeeded(obj extensionsv1alpha1.Object) bool {
	op := obj.GetExtensionStatus().GetLastOperation()
	return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded && obj.GetExtensionStatus().GetObservedGeneration() == obj.GetGeneration() &&
		obj.GetAnnotations()[v1beta1constants.GardenerOperation] == ""
}

// succeededAfter is succeeded, for a reconcile that wrote its status after since.
func succeededAfter(since time.Time) func(extensionsv1alpha1.Object) bool {
	return func(obj extensionsv1alpha1.Object) bool {
		op := obj.GetExtensionStatus().GetLastOperation()
		return succeeded(obj) && !op.LastUpdateTime.Time.Before(since.Truncate(time.Second))
	}
}

func failedWith(code gardencorev1beta1.ErrorCode) func(extensionsv1alpha1.Object) bool {
	return func(obj extensionsv1alpha1.Object) bool {
		le := obj.GetExtensionStatus().GetLastError()
		return le != nil && slices.Contains(le.Codes, code)
	}
}

// deleteAndWaitGone deletes obj and waits until its finalizer is released.
func deleteAndWaitGone(t *testing.T, obj extensionsv1alpha1.Object, timeout time.Duration) {
	t.Helper()
	if err := k8s.Delete(ctx(t), obj); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := k8s.Get(ctx(t), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not deleted within %s; status: %s", obj.GetName(), timeout, describe(obj))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var nameSeq int

// uniqueName returns a fresh DNS-label name with the given prefix.
func uniqueName(prefix string) string {
	nameSeq++
	return fmt.Sprintf("%s%d%d", prefix, time.Now().UnixNano()%100000, nameSeq)
}

// forget removes a BackupBucket that can never be deleted properly (its bucket is not ours or its
// credentials are wrong) by releasing its finalizers, as an operator would.
func forget(t *testing.T, obj client.Object) {
	t.Helper()
	c := context.Background()
	if err := k8s.Delete(c, obj); client.IgnoreNotFound(err) != nil {
		t.Error(err)
		return
	}
	if err := k8s.Get(c, client.ObjectKeyFromObject(obj), obj); err != nil {
		return
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	obj.SetFinalizers(nil)
	if err := k8s.Patch(c, obj, patch); client.IgnoreNotFound(err) != nil {
		t.Error(err)
	}
}
