// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// TestBucketAndEntryLifecycle is scenarios a-c: a core BackupBucket with generated credentials
// and a core BackupEntry, driven by gardenlet's controllers through the binary to MinIO; the
// etcd-backup secret proven by the real etcd-backup-restore; then gardenlet's deletion flows.
func TestBucketAndEntryLifecycle(t *testing.T) {
	requireStack(t)
	var (
		bb        *gardencorev1beta1.BackupBucket
		generated map[string][]byte // the garden copy of the generated secret's data
		s         shoot
		entry     *gardencorev1beta1.BackupEntry
	)
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"a: core BackupBucket becomes Ready with the generated secret copied to the garden", func(t *testing.T) {
			bb = coreBucket(t, fmt.Sprintf(generatedConfig, "10s"))
			bb = waitBucket(t, bb.Name, 3*time.Minute, "Succeeded with status.generatedSecretRef", func(bb *gardencorev1beta1.BackupBucket) bool {
				return bucketSucceeded(bb) && bb.Status.GeneratedSecretRef != nil
			})
			if ref := bb.Status.GeneratedSecretRef; ref.Namespace != gardenNamespace || ref.Name != "generated-bucket-"+bb.Name {
				t.Errorf("core status.generatedSecretRef = %s/%s; want %s/generated-bucket-%s", ref.Namespace, ref.Name, gardenNamespace, bb.Name)
			}
			ext := &extensionsv1alpha1.BackupBucket{}
			if err := seed.Get(ctx(), client.ObjectKey{Name: bb.Name}, ext); err != nil {
				t.Fatalf("gardenlet created no extension BackupBucket: %v", err)
			}
			if ref := ext.Spec.SecretRef; ref.Namespace != gardenNamespace || ref.Name != "bucket-"+bb.Name {
				t.Errorf("extension spec.secretRef = %s/%s; want gardenlet's copy %s/bucket-%s", ref.Namespace, ref.Name, gardenNamespace, bb.Name)
			}
			if ok, diff := sameCredentials(secretData(t, seed, gardenNamespace, "bucket-"+bb.Name), operatorData()); !ok {
				t.Errorf("gardenlet's seed copy of the operator's credentials differs: %s", diff)
			}
			if ext.Status.GeneratedSecretRef == nil {
				t.Fatal("the extension published no status.generatedSecretRef")
			}
			seedGenerated := secretData(t, seed, ext.Status.GeneratedSecretRef.Namespace, ext.Status.GeneratedSecretRef.Name)
			generated = secretData(t, garden, gardenNamespace, "generated-bucket-"+bb.Name)
			if ok, diff := sameCredentials(generated, seedGenerated); !ok {
				t.Errorf("the garden copy of the generated secret is not the extension's: %s", diff)
			}
			if bytes.Equal(generated["accessKeyID"], operatorData()["accessKeyID"]) {
				t.Error("the garden copy of the generated secret holds the operator's access key, not a generated one")
			}
			// gardenlet copies providerStatus (the aws extension publishes none for a bucket).
			if !rawEqual(bb.Status.ProviderStatus, ext.Status.ProviderStatus) {
				t.Errorf("core status.providerStatus %s; extension's %s", raw(bb.Status.ProviderStatus), raw(ext.Status.ProviderStatus))
			}
			if _, err := minio.S3Client().HeadBucket(ctx(), &s3.HeadBucketInput{Bucket: aws.String(bb.Name)}); err != nil {
				t.Errorf("the bucket is not in MinIO: %v", err)
			}
			t.Logf("core BackupBucket Succeeded; generated credential %s copied to the garden", credentialID(t, bb.Name))
		}},
		{"b: core BackupEntry gives etcd-backup that etcd-backup-restore snapshots with", func(t *testing.T) {
			s = newShoot(t)
			entry = coreEntry(t, s, "", bb.Name, seedA, nil)
			entry = waitEntry(t, s.entryKey(), 2*time.Minute, "Succeeded", entrySucceeded(""))
			if ok, diff := sameCredentials(secretData(t, seed, gardenNamespace, "entry-"+entry.Name), generated); !ok {
				t.Errorf("gardenlet's entry secret is not the generated credential: %s", diff)
			}
			etcdBackup := secretData(t, seed, s.technicalID(), "etcd-backup")
			if string(etcdBackup["bucketName"]) != bb.Name {
				t.Errorf("etcd-backup names bucket %q; want %q", etcdBackup["bucketName"], bb.Name)
			}
			if ok, diff := sameCredentials(etcdBackup, generated); !ok {
				t.Errorf("etcd-backup does not carry the generated credential: %s", diff)
			}
			snapshotOnce(t, etcdBackup, bb.Name, entry.Name)
		}},
		{"b2: a rotation reaches the entry's etcd-backup through gardenlet", func(t *testing.T) {
			// The extension publishes the new credential in a reconcile; its new lastOperation wakes
			// gardenlet, which copies it to the garden, and the core bucket's new lastOperation wakes
			// gardenlet's entry controller, which hands it to the entry.
			previous := credentialID(t, bb.Name)
			ext := &extensionsv1alpha1.BackupBucket{}
			if err := seed.Get(ctx(), client.ObjectKey{Name: bb.Name}, ext); err != nil {
				t.Fatal(err)
			}
			patch := client.MergeFrom(ext.DeepCopy())
			metav1.SetMetaDataAnnotation(&ext.ObjectMeta, backupbucket.AnnotationRotateCredentials, "gardenlet-e2e")
			metav1.SetMetaDataAnnotation(&ext.ObjectMeta, v1beta1constants.GardenerOperation, v1beta1constants.GardenerOperationReconcile)
			if err := seed.Patch(ctx(), ext, patch); err != nil {
				t.Fatal(err)
			}
			var rotated string
			eventually(t, time.Minute, "the rotated credential in the garden copy, the entry secret and etcd-backup", func() (bool, string) {
				rotated = credentialID(t, bb.Name)
				if rotated == previous {
					return false, "no new credential published yet"
				}
				got := map[string]bool{}
				for what, data := range map[string]map[string][]byte{
					"garden copy":  secretData(t, garden, gardenNamespace, "generated-bucket-"+bb.Name),
					"entry secret": secretData(t, seed, gardenNamespace, "entry-"+entry.Name),
					"etcd-backup":  secretData(t, seed, s.technicalID(), "etcd-backup"),
				} {
					got[what] = string(data["accessKeyID"]) == rotated
				}
				return got["garden copy"] && got["entry secret"] && got["etcd-backup"], fmt.Sprintf("holds the new credential: %v", got)
			})
			generated = secretData(t, garden, gardenNamespace, "generated-bucket-"+bb.Name)
			waitBucket(t, bb.Name, time.Minute, "Succeeded after the rotation", bucketSucceeded)
			waitEntry(t, s.entryKey(), time.Minute, "Succeeded after the rotation", entrySucceeded(""))
			etcdBackup := secretData(t, seed, s.technicalID(), "etcd-backup")
			if err := fw.StoreFor(t, etcdBackup).PutObject(ctx(), bb.Name, entry.Name+"/after-rotation", []byte("x")); err != nil {
				t.Errorf("etcd-backup after the rotation does not work: %v", err)
			}
			t.Logf("credential %s rotated to %s and handed to the entry by gardenlet", previous, rotated)
		}},
		{"c: deleting the entry empties its prefix only; deleting the bucket removes it and revokes the credential", func(t *testing.T) {
			store := fw.StoreFor(t, generated)
			neighbours := framework.FillEntry(t, store, bb.Name, entry.Name+"/", 20)
			other := newShoot(t).entryName() + "/etcd-main/v2/Full-00000001-00000002-1"
			if err := store.PutObject(ctx(), bb.Name, other, []byte("x")); err != nil {
				t.Fatal(err)
			}
			neighbours = append(neighbours, other)
			if err := garden.Delete(ctx(), entry); err != nil {
				t.Fatal(err)
			}
			waitGone(t, garden, entry, 2*time.Minute, "gardenlet finishes the core BackupEntry's deletion")
			waitGone(t, seed, &extensionsv1alpha1.BackupEntry{ObjectMeta: entry.ObjectMeta}, time.Second, "the extension BackupEntry is gone")
			for _, sec := range []client.ObjectKey{{Namespace: gardenNamespace, Name: "entry-" + entry.Name}, {Namespace: s.technicalID(), Name: "etcd-backup"}} {
				obj := &corev1.Secret{}
				obj.Namespace, obj.Name = sec.Namespace, sec.Name
				waitGone(t, seed, obj, 10*time.Second, "seed secret "+sec.String()+" is gone")
			}
			framework.AssertOnly(t, store, bb.Name, neighbours)

			credentials := &corev1.Secret{}
			if err := garden.Get(ctx(), client.ObjectKey{Namespace: gardenNamespace, Name: bb.Spec.CredentialsRef.Name}, credentials); err != nil {
				t.Fatal(err)
			}
			if err := garden.Delete(ctx(), bb); err != nil {
				t.Fatal(err)
			}
			waitGone(t, garden, bb, 3*time.Minute, "gardenlet finishes the core BackupBucket's deletion")
			for _, obj := range []client.Object{
				&extensionsv1alpha1.BackupBucket{ObjectMeta: bb.ObjectMeta},
				secretKey(gardenNamespace, "bucket-"+bb.Name),
				secretKey(gardenNamespace, "generated-bucket-"+bb.Name),
			} {
				waitGone(t, seed, obj, 10*time.Second, fmt.Sprintf("seed %T %s is gone", obj, obj.GetName()))
			}
			waitGone(t, garden, secretKey(gardenNamespace, "generated-bucket-"+bb.Name), 10*time.Second, "the garden copy of the generated secret is gone")
			if err := garden.Get(ctx(), client.ObjectKeyFromObject(credentials), credentials); err != nil {
				t.Fatal(err)
			}
			if slices.Contains(credentials.Finalizers, "core.gardener.cloud/backupbucket") {
				t.Errorf("gardenlet left its finalizer on the operator's credentials: %v", credentials.Finalizers)
			}
			_, err := minio.S3Client().HeadBucket(ctx(), &s3.HeadBucketInput{Bucket: aws.String(bb.Name)})
			if nf := new(s3types.NotFound); !errors.As(err, &nf) {
				t.Errorf("the bucket is still in MinIO (HeadBucket: %v)", err)
			}
			waitRefused(t, generated, bb.Name, "the deleted bucket's generated credential is revoked")
		}},
	}
	for _, step := range steps {
		if !t.Run(step.name, step.run) {
			t.FailNow()
		}
	}
}

// snapshotOnce runs the real etcd-backup-restore, with etcdBackup mounted as etcd-druid mounts
// it, against a real etcd until its first full snapshot is in the store under "<entry>/etcd-main/".
func snapshotOnce(t *testing.T, etcdBackup map[string][]byte, bucket, entry string) {
	t.Helper()
	snapshotWith(t, fw.StoreFor, awsstack.S3Consumer, etcdBackup, bucket, entry)
}

// snapshotWith is snapshotOnce for any provider: storeFor its stores, consumer how etcd-druid
// runs etcd-backup-restore for it. It returns the snapshot's keys.
func snapshotWith(t *testing.T, storeFor storeFunc, consumer stack.Consumer, etcdBackup map[string][]byte, bucket, entry string) []string {
	t.Helper()
	mount := t.TempDir()
	stack.MountSecret(t, mount, etcdBackup)
	db := stack.StartEtcd(t, filepath.Join(t.TempDir(), "etcd"))
	defer db.Stop()
	db.Put(t, "/registry/gardenlet-e2e", "1")
	sidecar := consumer.Snapshotter(t, db, mount, bucket, entry)
	defer sidecar.Stop()
	store := storeFor(t, etcdBackup)
	var keys []string
	eventually(t, time.Minute, "etcd-backup-restore's full snapshot with etcd-backup", func() (bool, string) {
		if sidecar.Exited() {
			t.Fatalf("etcd-backup-restore exited (%v):\n%s", sidecar.Err(), sidecar.Tail())
		}
		var err error
		keys, err = conformance.ListKeys(ctx(), store, bucket, entry+"/etcd-main/")
		if err != nil {
			return false, err.Error()
		}
		for _, k := range keys {
			if strings.Contains(k, "/Full-") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("keys %v; sidecar log:\n%s", keys, sidecar.Tail())
	})
	return keys
}

// waitRefused polls until MinIO refuses a store built from data: a write into bucket (a deleted
// bucket answers NoSuchBucket to a valid credential, InvalidAccessKeyId to a revoked one).
func waitRefused(t *testing.T, data map[string][]byte, bucket, what string) {
	t.Helper()
	eventually(t, time.Minute, what, func() (bool, string) {
		err := fw.StoreFor(t, data).PutObject(ctx(), bucket, "probe/revoked", []byte("x"))
		return conformance.Refused(err), fmt.Sprintf("a store from the credential is not refused: %v", err)
	})
}

func secretKey(namespace, name string) *corev1.Secret {
	s := &corev1.Secret{}
	s.Namespace, s.Name = namespace, name
	return s
}
