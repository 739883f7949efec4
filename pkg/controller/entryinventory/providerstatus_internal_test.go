// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinventory

import (
	"context"
	"fmt"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// The inventory publishes its part of providerStatus and withdraws it without touching the
// restore drill's, which another controller writes.
func TestInventoryKeepsTheDrillsPartOfProviderStatus(t *testing.T) {
	f := newInventoryFixture(t, entryName, cluster(false))
	f.snapshot("Full", f.clock.Now())
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Name: entryName}, be); err != nil {
		t.Fatal(err)
	}
	be.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(`{"drill":{"drilledAt":"2026-11-23T12:00:00Z","etcds":[{"name":"etcd-main","restorable":"True","deltas":0,"size":1,"bytesRead":1,"duration":"1s"}]}}`)}
	if err := f.client.Status().Update(context.Background(), be); err != nil {
		t.Fatal(err)
	}
	f.toFirstCount()
	_, ps, _ := f.reconcile(entryName)
	if ps.Inventory == nil || ps.Drill == nil || len(ps.Drill.Etcds) != 1 || ps.Drill.Etcds[0].Restorable != "True" {
		t.Fatalf("after an inventory: inventory %v, drill %+v", ps.Inventory != nil, ps.Drill)
	}

	f.inventoryTaker.opts.Interval = 0
	if _, ps, _ = f.reconcile(entryName); ps.Inventory != nil || ps.Drill == nil {
		t.Fatalf("after switching the inventory off: inventory %v, drill %+v", ps.Inventory != nil, ps.Drill)
	}
}

func TestMergeProviderStatus(t *testing.T) {
	be := &extensionsv1alpha1.BackupEntry{}
	entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { ps.Drill = &drill.Status{Bucket: "b"} })
	entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { ps.Inventory = nil })
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil || ps.Drill == nil || ps.Drill.Bucket != "b" || ps.Kind != entryinfo.ProviderStatusKind {
		t.Fatalf("%+v %v", ps, err)
	}
	entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { ps.Drill = nil })
	if be.Status.ProviderStatus != nil {
		t.Errorf("an empty providerStatus kept: %s", be.Status.ProviderStatus.Raw)
	}
}

// Each inventory checks the chains by names on its own listing and publishes what it finds in
// providerStatus.chains, and removes it when the chain is sound again.
func TestInventoryChecksChainsByNames(t *testing.T) {
	f := newInventoryFixture(t, entryName, cluster(false))
	put := func(name string) {
		if err := f.store.PutObject(context.Background(), "bucket", entryName+"/etcd-main/v2/"+name, []byte("snapshot")); err != nil {
			t.Fatal(err)
		}
	}
	unix := f.clock.Now().Unix()
	put(fmt.Sprintf("Full-00000000-00000010-%d", unix))
	put(fmt.Sprintf("Incr-00000011-00000020-%d", unix+1))
	put(fmt.Sprintf("Incr-00000031-00000040-%d", unix+2)) // 21-30 missing
	f.toFirstCount()
	listings := f.store.listings.Load()
	_, ps, _ := f.reconcile(entryName)
	if f.store.listings.Load() != listings+1 {
		t.Errorf("%d listings for one inventory", f.store.listings.Load()-listings)
	}
	if ps.Chains == nil || len(ps.Chains.Findings) != 1 || ps.Chains.Findings[0].Reason != drill.ReasonChainBroken || ps.Chains.Findings[0].Etcd != "etcd-main" || ps.Inventory == nil {
		t.Fatalf("chains %+v", ps.Chains)
	}
	checked := ps.Chains.CheckedAt

	// The same finding at the next inventory: nothing rewritten.
	f.clock.Step(inventoryInterval + time.Minute)
	if _, ps, _ = f.reconcile(entryName); ps.Chains == nil || !ps.Chains.CheckedAt.Equal(&checked) {
		t.Fatalf("chains %+v, want the first finding's", ps.Chains)
	}
	put(fmt.Sprintf("Incr-00000021-00000030-%d", unix+3))
	f.clock.Step(inventoryInterval + time.Minute)
	if _, ps, _ = f.reconcile(entryName); ps.Chains != nil {
		t.Fatalf("chains %+v after the gap is filled", ps.Chains)
	}
}

// The inventory's check selects the chain as etcd-backup-restore lists the store (its
// SnapshotRule): on a versioned S3-like store a second writer's delta "removed" by a delete
// marker is still what a restore applies, so it stays a finding.
func TestInventoryChecksTheChainARestoreUses(t *testing.T) {
	f := newInventoryFixture(t, entryName, cluster(false))
	ctx := context.Background()
	if err := f.store.SetVersioning(ctx, "bucket", true); err != nil {
		t.Fatal(err)
	}
	unix := f.clock.Now().Unix()
	prefix := entryName + "/etcd-main/v2/"
	second := prefix + fmt.Sprintf("Incr-00000015-00000025-%d", unix+2)
	for _, key := range []string{prefix + fmt.Sprintf("Full-00000000-00000010-%d", unix), prefix + fmt.Sprintf("Incr-00000011-00000020-%d", unix+1), second} {
		if err := f.store.PutObject(ctx, "bucket", key, []byte("snapshot")); err != nil {
			t.Fatal(err)
		}
	}
	if errs, err := f.store.DeleteObjects(ctx, "bucket", []objectstore.ObjectVersion{{Key: second}}); err != nil || len(errs) > 0 {
		t.Fatalf("plain delete: %v %v", errs, err)
	}
	f.toFirstCount()
	_, ps, _ := f.reconcile(entryName)
	if ps.Chains == nil || len(ps.Chains.Findings) != 1 || ps.Chains.Findings[0].Reason != drill.ReasonChainBroken || ps.Chains.Findings[0].Key != second {
		t.Fatalf("chains %+v, want ChainBroken naming %s", ps.Chains, second)
	}
}
