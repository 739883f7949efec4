// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestControlPlaneMigration is scenario d: a shoot's BackupEntry moves from seed-a to seed-b the
// way gardener moves it, with gardenlet's entry controllers of both seeds doing their part:
//
//   - migrate (source gardenlet): the shoot flow sets the core entry's spec.seedName to the target
//     (gardener pkg/component/garden/backupentry/backupentry.go:129-135); gardenlet annotates the
//     extension entry "migrate", deletes it once migrated, and reports Migrate Succeeded with
//     status.seedName cleared (pkg/gardenlet/controller/backupentry/reconciler.go:415-511, :589-591);
//   - restore (target gardenlet): the shoot flow deploys the "source-" entry on the original
//     bucket (pkg/gardenlet/operation/botanist/backupentry.go:82-93) and then the entry itself with
//     the "restore" operation on the target seed's bucket (backupentry.go:144-178); after etcd's
//     copy it force-deletes the source entry (botanist/backupentry.go:95-102).
//
// The seeds are two API servers, each with its own extension process and gardenlet; the source
// bucket's BackupBucket exists on seed-a only and the target's on seed-b only, so the source entry
// on seed-b names a bucket its seed has no BackupBucket of. (TestProviders' migration there and
// back adds Object Lock, etcd-backup-restore and the way back, for every provider.)
func TestControlPlaneMigration(t *testing.T) {
	requireStack(t)
	seedBClient := seeds[seedB].client
	source := coreBucket(t, bucketConfig)
	target := coreBucketOn(t, seedB, bucketConfig)
	waitBucket(t, source.Name, 2*time.Minute, "Succeeded", bucketSucceeded)
	waitBucket(t, target.Name, 2*time.Minute, "Succeeded", bucketSucceeded)
	store := fw.StoreFor(t, operatorData())

	s := newShoot(t)
	be := coreEntry(t, s, "", source.Name, seedA, nil)
	waitEntry(t, s.entryKey(), 2*time.Minute, "Succeeded on seed-a", entrySucceeded(""))
	if got := string(secretData(t, seed, s.technicalID(), "etcd-backup")["bucketName"]); got != source.Name {
		t.Fatalf("etcd-backup names bucket %q; want %q", got, source.Name)
	}
	neighbours := framework.FillEntry(t, store, source.Name, be.Name+"/", 10)
	sourceKeys, err := conformance.ListKeys(ctx(), store, source.Name, "")
	if err != nil {
		t.Fatal(err)
	}

	// Migrate.
	patchEntry(t, s.entryKey(), func(be *gardencorev1beta1.BackupEntry) { be.Spec.SeedName = new(seedB) })
	waitEntry(t, s.entryKey(), 2*time.Minute, "Migrate Succeeded with status.seedName cleared", func(be *gardencorev1beta1.BackupEntry) bool {
		return entrySucceeded(gardencorev1beta1.LastOperationTypeMigrate)(be) && be.Status.SeedName == nil
	})
	waitGone(t, seed, &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: be.Name}}, 10*time.Second, "the migrated extension BackupEntry is gone")
	waitGone(t, seed, secretKey(gardenNamespace, "entry-"+be.Name), 10*time.Second, "gardenlet's entry secret is gone after the migration")
	framework.AssertOnly(t, store, source.Name, sourceKeys) // the migration deleted nothing
	// The source seed's shoot namespace goes away with the migration (gardener deletes it, not the
	// extension): the target must write etcd-backup anew.
	if err := seed.Delete(ctx(), secretKey(s.technicalID(), "etcd-backup")); err != nil {
		t.Fatalf("the migration left no etcd-backup to remove (%v)", err)
	}
	s.placeOn(t, seedBClient) // gardenlet on seed-b: the shoot's namespace and Cluster

	// Restore, step 1: the source entry on the original bucket, reconciled by seed-b's gardenlet.
	src := coreEntry(t, s, v1beta1constants.BackupSourcePrefix+"-", source.Name, seedB,
		map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile})
	waitEntry(t, client.ObjectKeyFromObject(src), 2*time.Minute, "the source entry Succeeded on seed-b", entrySucceeded(""))
	sourceSecret := secretData(t, seedBClient, s.technicalID(), "source-etcd-backup")
	if got := string(sourceSecret["bucketName"]); got != source.Name {
		t.Errorf("source-etcd-backup names bucket %q; want the original %q", got, source.Name)
	}

	// Restore, step 2: the entry itself on the target bucket with the restore operation.
	patchEntry(t, s.entryKey(), func(be *gardencorev1beta1.BackupEntry) {
		metav1.SetMetaDataAnnotation(&be.ObjectMeta, v1beta1constants.GardenerOperation, v1beta1constants.GardenerOperationRestore)
		metav1.SetMetaDataAnnotation(&be.ObjectMeta, v1beta1constants.GardenerTimestamp, time.Now().UTC().Format(time.RFC3339Nano))
		be.Spec.BucketName = target.Name
		be.Spec.SeedName = new(seedB)
	})
	// gardenlet may follow the restore with one more operation at once (see below), so the core
	// entry is waited for as Succeeded on seed-b after the restore or after that reconcile: only
	// seed-b's gardenlet sets status.seedName to seed-b, and only by restoring the migrated entry.
	restored := waitEntry(t, s.entryKey(), 2*time.Minute, "Restore Succeeded on seed-b", func(be *gardencorev1beta1.BackupEntry) bool {
		succeeded := entrySucceeded(gardencorev1beta1.LastOperationTypeRestore)(be) || entrySucceeded(gardencorev1beta1.LastOperationTypeReconcile)(be)
		return succeeded && !hasOperationAnnotation(be) && ptr.Deref(be.Status.SeedName, "") == seedB
	})
	if got := ptr.Deref(restored.Status.SeedName, ""); got != seedB {
		t.Errorf("core status.seedName %q after the restore; want %q", got, seedB)
	}
	// The extension restored the entry (wait-for-state, then restore: its log says so) and ends
	// Succeeded on the target bucket. gardenlet may ask for one more operation right after the
	// restore: runs here saw a second restore, or a reconcile, start after the first restore
	// succeeded and after gardenlet had shown Restore Succeeded (harmless: both hold the objects).
	extBE := &extensionsv1alpha1.BackupEntry{}
	eventually(t, time.Minute, "the extension BackupEntry restored on the target bucket", func() (bool, string) {
		if err := seedBClient.Get(ctx(), client.ObjectKey{Name: be.Name}, extBE); err != nil {
			return false, err.Error()
		}
		op := extBE.Status.LastOperation
		return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded && extBE.Spec.BucketName == target.Name && !hasOperationAnnotation(extBE),
			fmt.Sprintf("%s, bucket %q, annotations %v", framework.Describe(extBE), extBE.Spec.BucketName, extBE.Annotations)
	})
	if log := logTail(seeds[seedB].ext.LogPath, 100000); !strings.Contains(log, "Successfully restored BackupEntry\t{\"controller\": \"backupentry\", \"namespace\": \"\", \"name\": \""+be.Name+"\"") {
		t.Errorf("the extension's log shows no restore of %s", be.Name)
	}
	etcdBackup := secretData(t, seedBClient, s.technicalID(), "etcd-backup")
	if got := string(etcdBackup["bucketName"]); got != target.Name {
		t.Errorf("the restored etcd-backup names bucket %q; want the target %q", got, target.Name)
	}
	framework.AssertOnly(t, store, source.Name, sourceKeys) // the source's backups are there to copy

	// etcd's copy (etcd-druid's job) into the target; then the shoot flow force-deletes the source entry.
	copied := be.Name + "/etcd-main/v2/Full-00000001-00000010-1"
	if err := store.PutObject(ctx(), target.Name, copied, []byte("copy")); err != nil {
		t.Fatal(err)
	}
	patchEntry(t, client.ObjectKeyFromObject(src), func(be *gardencorev1beta1.BackupEntry) {
		metav1.SetMetaDataAnnotation(&be.ObjectMeta, gardencorev1beta1.BackupEntryForceDeletion, "true")
	})
	if err := garden.Delete(ctx(), src); err != nil {
		t.Fatal(err)
	}
	waitGone(t, garden, src, 2*time.Minute, "gardenlet deletes the source entry")
	waitGone(t, seedBClient, secretKey(s.technicalID(), "source-etcd-backup"), 10*time.Second, "source-etcd-backup is gone")
	// Deleting "source-<entry>" deletes "<entry>/" in the ORIGINAL bucket (the copy is done), not
	// the target's backups and not the neighbours.
	framework.AssertOnly(t, store, source.Name, neighbours)
	framework.AssertOnly(t, store, target.Name, []string{copied})
	if data := secretData(t, seedBClient, s.technicalID(), "etcd-backup"); string(data["bucketName"]) != target.Name {
		t.Errorf("etcd-backup after the source entry's deletion names %q; want %q", data["bucketName"], target.Name)
	}

	// Clean up through gardenlet.
	cur := &gardencorev1beta1.BackupEntry{}
	if err := garden.Get(ctx(), s.entryKey(), cur); err != nil {
		t.Fatal(err)
	}
	if err := garden.Delete(ctx(), cur); err != nil {
		t.Fatal(err)
	}
	waitGone(t, garden, cur, 2*time.Minute, "gardenlet (seed-b) deletes the restored entry")
	framework.AssertOnly(t, store, target.Name, nil)
	for _, bb := range []*gardencorev1beta1.BackupBucket{source, target} {
		if err := garden.Delete(ctx(), bb); err != nil {
			t.Fatal(err)
		}
	}
	for _, bb := range []*gardencorev1beta1.BackupBucket{source, target} {
		waitGone(t, garden, bb, 2*time.Minute, "the core BackupBucket is deleted")
	}
}

// patchEntry changes the core BackupEntry with a merge patch, as gardener's components do.
func patchEntry(t *testing.T, key client.ObjectKey, change func(*gardencorev1beta1.BackupEntry)) {
	t.Helper()
	be := &gardencorev1beta1.BackupEntry{}
	if err := garden.Get(ctx(), key, be); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(be.DeepCopy())
	change(be)
	if err := garden.Patch(ctx(), be, patch); err != nil {
		t.Fatalf("patching core BackupEntry %s: %v", key, err)
	}
}
