// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// TestEntryDeletionWithBlobVersioningLeavesNothing: on an account with blob versioning (the blob
// stand-in, test/stack/azure.BlobStandIn: Azurite has no versioning), every blob of the entry written
// three times and some deleted before, the entry is reported deleted only when a listing of its
// prefix with every version and snapshot is empty; the neighbours keep all their versions.
func TestEntryDeletionWithBlobVersioningLeavesNothing(t *testing.T) {
	blobs := azurestack.StartBlobStandIn()
	defer blobs.Close()
	data := blobs.SecretData()
	s := env.StoreFor(t, data)
	bucket := framework.UniqueName("versioned-")
	if err := s.EnsureBucket(framework.Ctx(t), objectstore.Bucket{Name: bucket, Region: region}); err != nil {
		t.Fatal(err)
	}
	blobs.SetVersioning(azurestack.AzuriteAccount, true)
	shoot := framework.UniqueName("shoot--v--")
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, shoot+"--1", bucket, data)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	var neighbours []string
	for range 3 {
		neighbours = framework.FillEntry(t, s, bucket, shoot+"--1/", 300)
	}
	if errs, err := s.DeleteObjects(framework.Ctx(t), bucket, []objectstore.ObjectVersion{{Key: shoot + "--1/etcd-main/v2/Full-000000"}, {Key: neighbours[0]}}); err != nil || len(errs) > 0 {
		t.Fatal(errs, err)
	}
	all := func(prefix string) []objectstore.ObjectVersion {
		var out []objectstore.ObjectVersion
		if err := s.ListObjects(framework.Ctx(t), bucket, prefix, func(p []objectstore.ObjectVersion) error { out = append(out, p...); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if n := len(all(shoot + "--1/")); n < 900 {
		t.Fatalf("%d versions listed under the entry after 900 writes", n)
	}
	before := len(all(""))
	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	if left := all(shoot + "--1/"); len(left) > 0 {
		t.Fatalf("the entry was reported deleted with %d versions left, first %v", len(left), left[0])
	}
	// A delete with versioning on keeps the blob as a previous version: the entry holds 900.
	if after := len(all("")); after != before-900 {
		t.Fatalf("%d versions in the bucket after the deletion, %d before; want exactly the entry's 900 gone", after, before)
	}
	if keys, _ := conformance.ListKeys(framework.Ctx(t), s, bucket, ""); len(keys) != len(neighbours) {
		t.Fatalf("neighbour keys %v; want %v", keys, neighbours)
	}
}
