package aws_test

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

const generatedConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"generatedCredentials":{"issuer":"MinIO"}}`

func generatedSecret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	s, err := env.GeneratedSecret(t, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGeneratedMinIOCredentialsArePublishedRotatedAndRevoked(t *testing.T) {
	bb := env.CreateBucket(t, framework.UniqueName("gen-"), secretData(minio.Endpoint), generatedConfig)
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	if bb.Status.GeneratedSecretRef == nil || bb.Status.GeneratedSecretRef.Name != "generated-bucket-"+bb.Name {
		t.Fatalf("status.generatedSecretRef = %v", bb.Status.GeneratedSecretRef)
	}
	first := generatedSecret(t, bb.Name)
	if string(first.Data["accessKeyID"]) == minio.AccessKey {
		t.Fatal("the generated secret holds the operator's key")
	}

	// The shoot's entry gets the generated credential (gardenlet copies it), and its deletion
	// works with it and keeps the neighbour.
	shoot := framework.UniqueName("shoot--gen--")
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, shoot+"--1", bb.Name, first.Data)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	if keys, s := env.SecretKeys(t, shoot, "etcd-backup"); string(s.Data["accessKeyID"]) != string(first.Data["accessKeyID"]) {
		t.Fatalf("etcd-backup (%v) does not carry the generated key", keys)
	}
	scoped := env.StoreFor(t, first.Data)
	neighbours := framework.FillEntry(t, scoped, bb.Name, shoot+"--1/", 100)
	env.DeleteAndWaitGone(t, be, time.Minute)
	framework.AssertOnly(t, scoped, bb.Name, neighbours)

	// A requested rotation publishes a new user; the previous one stays valid (grace period).
	env.Trigger(t, bb, backupbucket.AnnotationRotateCredentials, "r1")
	deadline := time.Now().Add(time.Minute)
	second := generatedSecret(t, bb.Name)
	for string(second.Data["accessKeyID"]) == string(first.Data["accessKeyID"]) {
		if time.Now().After(deadline) {
			t.Fatal("the rotation published no new credential")
		}
		time.Sleep(200 * time.Millisecond)
		second = generatedSecret(t, bb.Name)
	}
	if err := env.StoreFor(t, first.Data).PutObject(framework.Ctx(t), bb.Name, "shoot--gen--x/still", []byte("x")); err != nil {
		t.Fatalf("the previous credential was revoked before its grace period: %v", err)
	}
	if err := env.StoreFor(t, second.Data).PutObject(framework.Ctx(t), bb.Name, "shoot--gen--x/new", []byte("x")); err != nil {
		t.Fatalf("the new credential does not write: %v", err)
	}

	// Bucket deletion revokes every generated credential and deletes the secret.
	env.DeleteAndWaitGone(t, bb, time.Minute)
	if err := env.K8s.Get(framework.Ctx(t), client.ObjectKey{Namespace: "garden", Name: "generated-bucket-" + bb.Name}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("generated secret after the bucket's deletion: %v", err)
	}
	for _, d := range []map[string][]byte{first.Data, second.Data} {
		if err := env.StoreFor(t, d).PutObject(framework.Ctx(t), bb.Name, "x", []byte("x")); !errors.Is(err, objectstore.ErrUnauthenticated) {
			t.Errorf("a generated credential survived its bucket: %v", err)
		}
	}
}
