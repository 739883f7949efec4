// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"bytes"
	"fmt"
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

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

// TestGeneratedCredentialsRetired is scenario f: generated credentials are switched off on the
// core BackupBucket's providerConfig while an entry uses them; after the grace period the
// extension revokes the generated credential. The truth required: after the retirement, the
// entry's etcd-backup still works.
//
// gardenlet v1.150 never clears the core BackupBucket's status.generatedSecretRef: it only sets it
// when the extension's is set (gardener pkg/gardenlet/controller/backupbucket/reconciler.go:392-437),
// and its garden copy garden/generated-bucket-<name> lives until the bucket is deleted (:439-463);
// the entry controller prefers that ref over spec.credentialsRef (backupentry/reconciler.go:664-669).
// So the extension keeps its reference and puts the operator's credentials into the secret it
// names: gardenlet copies them to the garden and on to the entries. (Before, the extension
// cleared its reference, and entries kept a credential it then revoked; this test failed so.)
func TestGeneratedCredentialsRetired(t *testing.T) {
	requireStack(t)
	bb := coreBucket(t, fmt.Sprintf(generatedConfig, "5s"))
	bb = waitBucket(t, bb.Name, 2*time.Minute, "Succeeded with status.generatedSecretRef", func(bb *gardencorev1beta1.BackupBucket) bool {
		return bucketSucceeded(bb) && bb.Status.GeneratedSecretRef != nil
	})
	retired := credentialID(t, bb.Name)
	s := newShoot(t)
	coreEntry(t, s, "", bb.Name, seedA, nil)
	waitEntry(t, s.entryKey(), 2*time.Minute, "Succeeded", entrySucceeded(""))
	etcdBackup := secretData(t, seed, s.technicalID(), "etcd-backup")
	if err := fw.StoreFor(t, etcdBackup).PutObject(ctx(), bb.Name, s.entryName()+"/probe", []byte("x")); err != nil {
		t.Fatalf("etcd-backup does not work before the retirement: %v", err)
	}

	// Switch generated credentials off (gardenlet copies the providerConfig to the extension).
	if err := garden.Get(ctx(), client.ObjectKeyFromObject(bb), bb); err != nil {
		t.Fatal(err)
	}
	bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(bucketConfig)}
	if err := garden.Update(ctx(), bb); err != nil {
		t.Fatal(err)
	}
	waitBucket(t, bb.Name, 2*time.Minute, "Succeeded with the new providerConfig", bucketSucceeded)
	// The extension records the retirement on its generated secret (due after the default grace
	// of a week): make it due now and ask for the reconcile its scheduler would ask for then.
	generatedKey := client.ObjectKey{Namespace: gardenNamespace, Name: "generated-bucket-" + bb.Name}
	eventually(t, time.Minute, "the extension records the retirement", func() (bool, string) {
		sec := &corev1.Secret{}
		if err := seed.Get(ctx(), generatedKey, sec); err != nil {
			return false, err.Error()
		}
		if sec.Annotations[backupbucket.AnnotationRetireAfter] == "" {
			return false, fmt.Sprintf("annotations %v", sec.Annotations)
		}
		patch := client.MergeFrom(sec.DeepCopy())
		sec.Annotations[backupbucket.AnnotationRetireAfter] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
		return seed.Patch(ctx(), sec, patch) == nil, "patching retire-after"
	})
	extBB := &extensionsv1alpha1.BackupBucket{}
	if err := seed.Get(ctx(), client.ObjectKey{Name: bb.Name}, extBB); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(extBB.DeepCopy())
	metav1.SetMetaDataAnnotation(&extBB.ObjectMeta, v1beta1constants.GardenerOperation, v1beta1constants.GardenerOperationReconcile)
	if err := seed.Patch(ctx(), extBB, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the extension revokes the retired credential; its secret keeps the operator's credentials", func() (bool, string) {
		sec := &corev1.Secret{}
		if err := seed.Get(ctx(), generatedKey, sec); err != nil {
			return false, err.Error()
		}
		operator := bytes.Equal(sec.Data["accessKeyID"], operatorData()["accessKeyID"])
		return sec.Annotations[backupbucket.AnnotationCredential] == "" && operator,
			fmt.Sprintf("annotations %v, holds the operator's access key: %t", sec.Annotations, operator)
	})
	waitRefused(t, map[string][]byte{"accessKeyID": []byte(retired), "secretAccessKey": []byte("x"), "endpoint": []byte(proxy.URL)}, bb.Name,
		"the retired credential is revoked in MinIO") // an unknown access key is refused whatever the secret key
	waitBucket(t, bb.Name, time.Minute, "Succeeded after the retirement", bucketSucceeded)

	// The truth: the entry's etcd-backup still works.
	var observed string
	deadline := time.Now().Add(time.Minute)
	for {
		etcdBackup = secretData(t, seed, s.technicalID(), "etcd-backup")
		err := fw.StoreFor(t, etcdBackup).PutObject(ctx(), bb.Name, s.entryName()+"/after-retirement", []byte("x"))
		if err == nil {
			return
		}
		core := &gardencorev1beta1.BackupBucket{}
		if gerr := garden.Get(ctx(), client.ObjectKeyFromObject(bb), core); gerr != nil {
			t.Fatal(gerr)
		}
		gardenCopy, sec := "absent", &corev1.Secret{}
		switch cerr := garden.Get(ctx(), client.ObjectKey{Namespace: gardenNamespace, Name: "generated-bucket-" + bb.Name}, sec); {
		case cerr == nil:
			gardenCopy = fmt.Sprintf("present (holds the retired credential: %t)", bytes.Equal(sec.Data["accessKeyID"], []byte(retired)))
		case !apierrors.IsNotFound(cerr):
			gardenCopy = "unreadable: " + cerr.Error()
		}
		entrySecret := secretData(t, seed, gardenNamespace, "entry-"+s.entryName())
		observed = fmt.Sprintf("a store from etcd-backup is refused (%v, refused: %t); etcd-backup holds the retired credential %s: %t; "+
			"gardenlet's entry secret %s/entry-%s holds it: %t; core BackupBucket status.generatedSecretRef %v; garden copy %s; extension status.generatedSecretRef %v",
			err, conformance.Refused(err), retired, bytes.Equal(etcdBackup["accessKeyID"], []byte(retired)),
			gardenNamespace, s.entryName(), bytes.Equal(entrySecret["accessKeyID"], []byte(retired)),
			core.Status.GeneratedSecretRef, gardenCopy, extensionRef(bb.Name))
		if time.Now().After(deadline) {
			t.Fatalf("after the retirement the entry's etcd-backup no longer works (gardenlet v1.150 keeps the core BackupBucket's "+
				"status.generatedSecretRef and hands its garden copy to the entries): %s", observed)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func extensionRef(name string) string {
	bb := &extensionsv1alpha1.BackupBucket{}
	if err := seed.Get(ctx(), client.ObjectKey{Name: name}, bb); err != nil {
		return err.Error()
	}
	return fmt.Sprint(bb.Status.GeneratedSecretRef)
}
