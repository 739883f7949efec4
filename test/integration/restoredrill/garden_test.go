// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"
	extensionsbackupentry "github.com/gardener/gardener/pkg/component/extensions/backupentry"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestBinaryLocatesTheGardensSnapshots: the garden's BackupEntry as gardener-operator creates it
// (gardener's own BackupEntry component, class garden, named garden--<Garden UID>), in a bucket
// whose Garden bucketName has a path and which other backups share; the real etcd-backup-restore
// snapshots a real etcd under gardener-operator's store prefix <path>/virtual-garden-etcd-main/etcd-main.
// The real aws binary's inventory counts them (BackupsFresh True), its drill restores them
// (BackupsRestorable True at etcd's revision); deleting the entry while the Garden lives deletes
// nothing (ERR_CONFIGURATION_PROBLEM); once the Garden is being deleted, the entry's deletion
// deletes exactly the garden's snapshots and nothing else in the bucket.
func TestBinaryLocatesTheGardensSnapshots(t *testing.T) {
	ctx := context.Background()
	s := startDrillStack(t, ctx, t.TempDir(), "--extension-classes=garden",
		"--entry-inventory-interval", "3s", "--restore-drill-interval", "3s", "--restore-drill-scratch-dir", t.TempDir(), "--restore-drill-read-rate", "0")
	env, data := s.env, s.data

	// The BackupBucket as gardener-operator deploys it (class garden, secret in garden).
	bucket := framework.UniqueName("garden-shared-")
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: bucket, Annotations: map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile}},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: awsprovider.Type, Class: new(extensionsv1alpha1.ExtensionClassGarden),
				ProviderConfig: &runtime.RawExtension{Raw: []byte(minioConfig)}},
			Region:    region,
			SecretRef: env.CreateSecret(t, v1beta1constants.GardenNamespace, "virtual-garden-etcd-main-backup", data),
		},
	}
	if err := env.K8s.Create(ctx, bb); err != nil {
		t.Fatal(err)
	}
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)

	garden := newGarden(bucket + "/landscape/")
	if err := env.K8s.Create(ctx, garden); err != nil {
		t.Fatal(err)
	}
	// gardener-operator's BackupEntry for it, by gardener's own component.
	entry := extensionsbackupentry.New(logr.Discard(), env.K8s, clock.RealClock{}, &extensionsbackupentry.Values{
		Name: v1beta1constants.GardenNamespace + "--" + string(garden.UID), Type: awsprovider.Type, Class: new(extensionsv1alpha1.ExtensionClassGarden),
		Region: region, SecretRef: bb.Spec.SecretRef, BucketName: bucket, ProviderConfig: &runtime.RawExtension{Raw: []byte(minioConfig)},
	}, time.Second, 30*time.Second, 2*time.Minute)
	env.EnsureNamespace(t, v1beta1constants.GardenNamespace)
	if err := entry.Deploy(ctx); err != nil {
		t.Fatal(err)
	}
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: v1beta1constants.GardenNamespace + "--" + string(garden.UID)}}
	env.WaitFor(t, be, time.Minute, "garden entry reconciled", framework.Succeeded)
	if _, s := env.SecretKeys(t, v1beta1constants.GardenNamespace, v1beta1constants.BackupSecretName); string(s.Data["bucketName"]) != bucket {
		t.Fatalf("etcd-backup in namespace garden names bucket %q; want %q", s.Data["bucketName"], bucket)
	}

	// What else the bucket holds: a seed's shoot, another garden's etcd without a path, names
	// that extend the garden's prefix, the entry's own name.
	store := env.StoreFor(t, data)
	gardenPrefix := "landscape/" + operatorv1alpha1.VirtualGardenETCDMain + "/"
	others := []string{"shoot--p--s--uid1/etcd-main/v2/Full-00000000-00000001-1700000000",
		operatorv1alpha1.VirtualGardenETCDMain + "/etcd-main/v2/Full-00000000-00000001-1700000000",
		"landscape/" + operatorv1alpha1.VirtualGardenETCDMain + "-2/etcd-main/v2/Full-00000000-00000001-1700000000",
		be.Name + "/keep"}
	for _, k := range others {
		if err := store.PutObject(ctx, bucket, k, []byte("not the garden's")); err != nil {
			t.Fatal(err)
		}
	}
	secret := s.backupSecret(bucket)
	keys, rev := backUp(t, ctx, store, secret, bucket, strings.TrimSuffix(gardenPrefix, "/"))

	env.WaitFor(t, be, 2*time.Minute, "BackupsFresh True from the garden's prefix", func(obj extensionsv1alpha1.Object) bool {
		c := v1beta1helper.GetCondition(obj.(*extensionsv1alpha1.BackupEntry).Status.Conditions, entryinventory.ConditionBackupsFresh)
		ps, err := entryinfo.ReadProviderStatus(obj.(*extensionsv1alpha1.BackupEntry))
		return c != nil && c.Status == gardencorev1beta1.ConditionTrue && err == nil && ps.Inventory != nil && ps.Inventory.Prefix == gardenPrefix
	})
	env.WaitFor(t, be, 2*time.Minute, "BackupsRestorable True at the last revision", func(obj extensionsv1alpha1.Object) bool {
		ps, err := entryinfo.ReadProviderStatus(obj.(*extensionsv1alpha1.BackupEntry))
		return restorable(gardencorev1beta1.ConditionTrue, restoredrill.ReasonRestored)(obj) && err == nil && ps.Drill != nil &&
			ps.Drill.Prefix == gardenPrefix && len(ps.Drill.Etcds) == 1 && ps.Drill.Etcds[0].Revision == rev
	})
	ps, _ := entryinfo.ReadProviderStatus(be)
	if e := ps.Inventory.Etcds; len(e) != 1 || e[0].Name != "etcd-main" || e[0].LatestFull == nil || !strings.HasPrefix(e[0].LatestFull.Key, gardenPrefix+"etcd-main/v2/") {
		t.Errorf("inventory's etcds %+v; want etcd-main under %s", e, gardenPrefix)
	}
	if d := ps.Drill.Etcds[0]; d.Keys != int64(keys) {
		t.Errorf("drill of %+v; want %d keys", d, keys)
	}
	t.Logf("inventory: %d objects under %s; drill: %s", ps.Inventory.Objects, ps.Inventory.Prefix, v1beta1helper.GetCondition(be.Status.Conditions, restoredrill.ConditionBackupsRestorable).Message)

	// Deleted while its Garden lives: kept, nothing deleted.
	before := framework.ListAll(t, ctx, store, bucket)
	env.DeleteFailingWith(t, be, gardencorev1beta1.ErrorConfigurationProblem)
	if !env.EventuallyHasEvent(t, be.Name, backupentry.ReasonBackupsKept, "is not being deleted", 30*time.Second) {
		t.Error("no BackupsKept event")
	}
	if after := framework.ListAll(t, ctx, store, bucket); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the kept entry's deletion changed the bucket:\nbefore %v\nafter  %v", before, after)
	}

	// The Garden is being deleted (gardener-operator deletes its entry after its etcd): the
	// entry's deletion deletes the garden's snapshots and nothing else.
	if err := env.K8s.Delete(ctx, garden); err != nil {
		t.Fatal(err)
	}
	env.Trigger(t, be)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if err := env.K8s.Get(ctx, client.ObjectKeyFromObject(be), be); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		} else if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the garden's entry was not deleted: %s", framework.Describe(be))
		}
	}
	var left []string
	for _, o := range framework.ListAll(t, ctx, store, bucket) {
		left = append(left, o.Key)
	}
	slices.Sort(left)
	slices.Sort(others)
	if !slices.Equal(left, others) {
		t.Errorf("left in the bucket %v; want exactly the others' %v", left, others)
	}
	patch := client.MergeFrom(garden.DeepCopy())
	garden.Finalizers = nil
	if err := env.K8s.Patch(ctx, garden, patch); client.IgnoreNotFound(err) != nil {
		t.Error(err)
	}
}

// newGarden is a Garden as gardener's own integration test of gardener-operator writes it, with
// etcd-main's backup in bucketName and gardener-operator's finalizer.
func newGarden(bucketName string) *operatorv1alpha1.Garden {
	return &operatorv1alpha1.Garden{
		ObjectMeta: metav1.ObjectMeta{Name: framework.UniqueName("garden-"), Finalizers: []string{operatorv1alpha1.FinalizerName}},
		Spec: operatorv1alpha1.GardenSpec{
			RuntimeCluster: operatorv1alpha1.RuntimeCluster{
				Networking: operatorv1alpha1.RuntimeNetworking{Pods: []string{"10.1.0.0/16"}, Services: []string{"10.2.0.0/16"}},
				Ingress: operatorv1alpha1.Ingress{Domains: []operatorv1alpha1.DNSDomain{{Name: "ingress.runtime-garden.local.gardener.cloud"}},
					Controller: gardencorev1beta1.IngressController{Kind: "nginx"}},
				Provider: operatorv1alpha1.Provider{Zones: []string{"a"}, Region: new(region)},
			},
			VirtualCluster: operatorv1alpha1.VirtualCluster{
				DNS:         operatorv1alpha1.DNS{Domains: []operatorv1alpha1.DNSDomain{{Name: "virtual-garden.local.gardener.cloud"}}},
				ETCD:        &operatorv1alpha1.ETCD{Main: &operatorv1alpha1.ETCDMain{Backup: &operatorv1alpha1.Backup{Provider: awsprovider.Type, BucketName: &bucketName, SecretRef: corev1.LocalObjectReference{Name: "virtual-garden-etcd-main-backup"}}}},
				Gardener:    operatorv1alpha1.Gardener{ClusterIdentity: "test"},
				Kubernetes:  operatorv1alpha1.Kubernetes{Version: "1.31.1"},
				Maintenance: operatorv1alpha1.Maintenance{TimeWindow: gardencorev1beta1.MaintenanceTimeWindow{Begin: "220000+0100", End: "230000+0100"}},
				Networking:  operatorv1alpha1.Networking{Services: []string{"100.64.0.0/13"}},
			},
		},
	}
}
