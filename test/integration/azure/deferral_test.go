// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"testing"
	"time"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// TestSourceEntryWithOnlyAnAccountKeyDefersLockedObjects is issue 25's finding 4 on Azure: a
// migration's source- entry lives on the destination seed with the account key only, and its
// bucket's BackupBucket is on the source seed (here: on no seed of this API server; the bucket
// was made by another seed's reconcile through the ARM stand-in). Its locked blobs are tagged and
// the deletion completes, on the strength of the rule the bucket's reconcile read back and
// recorded in the container; the event says who verified the rule and when.
func TestSourceEntryWithOnlyAnAccountKeyDefersLockedObjects(t *testing.T) {
	blobs := azurestack.StartBlobStandIn()
	defer blobs.Close()
	otherSeed := azurestack.StartARM(blobs.StandInEndpoint())
	defer otherSeed.Close()
	p := &azureprovider.Provider{Cloud: otherSeed.Cloud(), ManagementTransport: otherSeed.Client()}
	bucketStore, err := p.NewManagement(context.Background(), provider.Credentials{Data: otherSeed.ServicePrincipal(), Region: region}, &azureapi.BackupBucketConfig{})
	if err != nil {
		t.Fatal(err)
	}
	bucket := framework.UniqueName("locked-")
	if err := bucketStore.EnsureBucket(framework.Ctx(t), objectstore.Bucket{Name: bucket, Region: region}); err != nil {
		t.Fatal(err)
	}
	key := map[string][]byte{"storageAccount": []byte(azurestack.StandInAccount), "storageKey": []byte(azurestack.StandInKeys[0]), "domain": []byte(blobs.Host()), "emulatorEnabled": []byte("true")}
	s := env.StoreFor(t, key)
	shoot := framework.UniqueName("shoot--m--")
	env.EnsureNamespace(t, shoot)
	// Written before the source entry exists, as in gardener's migration.
	neighbours := framework.FillEntry(t, s, bucket, shoot+"--1/", 20)
	blobs.LockContainer(azurestack.StandInAccount, bucket, true)

	be := env.CreateEntry(t, "source-"+shoot+"--1", bucket, key)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	env.DeleteAndWaitGone(t, be, 2*time.Minute)

	if !env.EventuallyHasEvent(t, be.Name, backupentry.ReasonLockedObjectsDeferred, "verified by the BackupBucket's reconcile at", 10*time.Second) {
		t.Errorf("no %s event saying that the bucket's reconcile verified the rule", backupentry.ReasonLockedObjectsDeferred)
	}
	keys, err := conformance.ListKeys(framework.Ctx(t), s, bucket, shoot+"--1/")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 20 {
		t.Fatalf("%d blobs left under the entry in a locked container; want all 20 kept", len(keys))
	}
	for _, k := range keys {
		if tags := blobs.Tags(azurestack.StandInAccount, bucket, k)["current"]; tags[azureprovider.DeferredDeletionTag] != "true" {
			t.Errorf("locked blob %s left untagged (tags %v): the deletion was reported without its deferral", k, tags)
		}
	}
	framework.AssertOnly(t, s, bucket, append(neighbours, keys...))
}
