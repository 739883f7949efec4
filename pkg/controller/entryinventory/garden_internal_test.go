// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinventory

import (
	"context"
	"fmt"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestGardenEntryInventory: the inventory of a garden's entry counts gardener-operator's prefix
// (here with a path), records it, and judges the garden's snapshots: fresh ones make BackupsFresh
// True; nothing under the entry's own name is looked for.
func TestGardenEntryInventory(t *testing.T) {
	// gardener-operator's Garden with etcd-main's backup under a path of "bucket", and its entry
	// garden--<uid>.
	garden := &operatorv1alpha1.Garden{ObjectMeta: metav1.ObjectMeta{Name: "garden", UID: "6f1d3c2a-garden"}}
	garden.Spec.VirtualCluster.ETCD = &operatorv1alpha1.ETCD{Main: &operatorv1alpha1.ETCDMain{Backup: &operatorv1alpha1.Backup{Provider: "mem", BucketName: new("bucket/landscape")}}}
	name := v1beta1constants.GardenNamespace + "--" + string(garden.UID)
	f := newInventoryFixture(t, name, garden)
	ctx := context.Background()
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
		t.Fatal(err)
	}
	be.Spec.Class = new(extensionsv1alpha1.ExtensionClassGarden)
	if err := f.client.Update(ctx, be); err != nil {
		t.Fatal(err)
	}
	now := created.Add(2 * inventoryInterval)
	f.clock.SetTime(now)
	prefix := "landscape/" + operatorv1alpha1.VirtualGardenETCDMain + "/"
	full := fmt.Sprintf("%setcd-main/v2/Full-00000000-00000010-%d.gz", prefix, now.Add(-10*time.Minute).Unix())
	delta := fmt.Sprintf("%setcd-main/v2/Incr-00000011-00000020-%d.gz", prefix, now.Add(-time.Minute).Unix())
	for _, k := range []string{full, delta} {
		if err := f.store.PutObject(ctx, "bucket", k, []byte("snapshot")); err != nil {
			t.Fatal(err)
		}
	}
	cond, ps, _ := f.reconcile(name)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("BackupsFresh %+v; want True from the garden's snapshots under %s", cond, prefix)
	}
	inv := ps.Inventory
	if inv == nil || inv.Prefix != prefix || len(inv.Etcds) != 1 || inv.Etcds[0].Name != "etcd-main" ||
		inv.Etcds[0].LatestFull == nil || inv.Etcds[0].LatestFull.Key != full || inv.Etcds[0].LatestDelta == nil || inv.Etcds[0].LatestDelta.Key != delta {
		t.Fatalf("inventory %+v; want %s's etcd-main with %s and %s", inv, prefix, full, delta)
	}
}
