// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinventory

import (
	"context"
	"fmt"
	"testing"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestFreshnessWhileServingTheCopy: while copy.serve is copy, the shoot's Etcd names the copy
// bucket and its etcd-backup holds the copy's credentials, the shoot writes the copy: the
// inventory counts the copy bucket (read with the copy's credentials), not the primary nobody
// writes. Until both (the switch pending), the primary is counted.
func TestFreshnessWhileServingTheCopy(t *testing.T) {
	ctx := context.Background()
	copySecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}, Data: map[string][]byte{"key": []byte("copy")}}
	etcdBackup := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--s", Name: "etcd-backup"},
		Data: map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte("bucket"), "key": []byte("k")}}
	f := newInventoryFixture(t, entryName, cluster(false), copySecret, etcdBackup)
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(ctx, client.ObjectKey{Name: entryName}, be); err != nil {
		t.Fatal(err)
	}
	be.Spec.ProviderConfig = controllertest.RawConfig(controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy", Serve: copystore.ServeCopy}}})
	if err := f.client.Update(ctx, be); err != nil {
		t.Fatal(err)
	}
	if err := f.store.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket-copy"}); err != nil {
		t.Fatal(err)
	}
	// The primary holds a snapshot from before the switch; the copy one the shoot wrote since.
	f.snapshot("Full", f.clock.Now())
	written := fmt.Sprintf("%s/etcd-main/v2/Full-%08d-%08d-%d", entryName, 1, 3, f.clock.Now().Unix())
	if err := f.store.PutObject(ctx, "bucket-copy", written, []byte("snapshot")); err != nil {
		t.Fatal(err)
	}

	f.toFirstCount()
	if _, ps, _ := f.reconcile(entryName); ps.Inventory == nil || ps.Inventory.Bucket != "bucket" {
		t.Fatalf("etcd-backup names the primary: inventory %+v; want bucket %q counted", ps.Inventory, "bucket")
	}

	// The two-phase switch: etcd-backup names the copy but keeps the primary's credentials while
	// the Etcd names the primary; gardenlet's roll puts the copy in the Etcd, and the entry's next
	// reconcile the copy's credentials in etcd-backup. Only then does the shoot write the copy.
	etcd := &druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--s", Name: "etcd-main"},
		Spec: druidcorev1alpha1.EtcdSpec{Backup: druidcorev1alpha1.BackupSpec{Store: &druidcorev1alpha1.StoreSpec{Container: new("bucket")}}}}
	if err := f.client.Create(ctx, etcd); err != nil {
		t.Fatal(err)
	}
	etcdBackup.Data[v1beta1constants.DataKeyBackupBucketName] = []byte("bucket-copy")
	if err := f.client.Update(ctx, etcdBackup); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"etcd-backup names the copy, the Etcd the primary", "the Etcd names the copy, etcd-backup holds the primary's credentials"} {
		if step != "etcd-backup names the copy, the Etcd the primary" {
			etcd.Spec.Backup.Store.Container = new("bucket-copy")
			if err := f.client.Update(ctx, etcd); err != nil {
				t.Fatal(err)
			}
		}
		if _, ps, _ := f.reconcile(entryName); ps.Inventory == nil || ps.Inventory.Bucket != "bucket" {
			t.Fatalf("%s: inventory %+v; want bucket %q counted", step, ps.Inventory, "bucket")
		}
	}
	etcdBackup.Data["key"] = []byte("copy")
	if err := f.client.Update(ctx, etcdBackup); err != nil {
		t.Fatal(err)
	}
	_, ps, _ := f.reconcile(entryName)
	if ps.Inventory == nil || ps.Inventory.Bucket != "bucket-copy" || len(ps.Inventory.Etcds) != 1 || ps.Inventory.Etcds[0].LatestFull == nil || ps.Inventory.Etcds[0].LatestFull.Key != written {
		t.Fatalf("the shoot writes the copy: inventory %+v; want the copy bucket counted, its snapshot %q", ps.Inventory, written)
	}
}
