package backupentry

import (
	"context"
	"testing"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
)

// The inventory publishes its part of providerStatus and withdraws it without touching the
// restore drill's, which another controller writes.
func TestInventoryKeepsTheDrillsPartOfProviderStatus(t *testing.T) {
	f := newInventoryFixture(t, entryName, cluster("shoot--p--s", false))
	f.snapshot("Full", f.clock.Now())
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Name: entryName}, be); err != nil {
		t.Fatal(err)
	}
	be.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(`{"drill":{"drilledAt":"2026-11-23T12:00:00Z","etcds":[{"name":"etcd-main","restorable":"True","deltas":0,"size":1,"bytesRead":1,"duration":"1s"}]}}`)}
	if err := f.client.Status().Update(context.Background(), be); err != nil {
		t.Fatal(err)
	}
	f.toFirstCount(entryName)
	_, ps, _ := f.reconcile(entryName)
	if ps.Inventory == nil || ps.Drill == nil || len(ps.Drill.Etcds) != 1 || ps.Drill.Etcds[0].Restorable != "True" {
		t.Fatalf("after an inventory: inventory %v, drill %+v", ps.Inventory != nil, ps.Drill)
	}

	f.inventoryTaker.Options.InventoryInterval = 0
	if _, ps, _ = f.reconcile(entryName); ps.Inventory != nil || ps.Drill == nil {
		t.Fatalf("after switching the inventory off: inventory %v, drill %+v", ps.Inventory != nil, ps.Drill)
	}
}

func TestMergeProviderStatus(t *testing.T) {
	be := &extensionsv1alpha1.BackupEntry{}
	MergeProviderStatus(be, func(ps *ProviderStatus) { ps.Drill = &drill.Status{Bucket: "b"} })
	MergeProviderStatus(be, func(ps *ProviderStatus) { ps.Inventory = nil })
	ps, err := ReadProviderStatus(be)
	if err != nil || ps.Drill == nil || ps.Drill.Bucket != "b" || ps.Kind != ProviderStatusKind {
		t.Fatalf("%+v %v", ps, err)
	}
	MergeProviderStatus(be, func(ps *ProviderStatus) { ps.Drill = nil })
	if be.Status.ProviderStatus != nil {
		t.Errorf("an empty providerStatus kept: %s", be.Status.ProviderStatus.Raw)
	}
}
