// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// smallPages lists three entries a page, so that page boundaries fall between one blob's
// versions and snapshots.
var smallPages = &azureprovider.Provider{ListPageSize: 3}

// azuritePages is the listing page size of the Azurite harnesses: the paging cases cross a page
// boundary with 1,200 objects instead of Azure's 5,000-entry pages needing 6,000, which Azurite
// (about 150-200 deletes/s, slower as a container fills) could not write and delete within the
// suite's two minutes on a loaded machine. Pages of 5,000 are covered on the blob stand-in.
const azuritePages = 1000

func TestConformanceOnAzurite(t *testing.T) {
	good := azurite.SecretData()
	store := newStoreWith(t, &azureprovider.Provider{ListPageSize: azuritePages}, good)
	defer azureprovider.SetBlockSizes(1<<20, 256<<20)()
	conformance.Run(t, conformance.Harness{
		Store:         store,
		MarkExcluded:  conformance.MarkerOf(store),
		SmallPages:    newStoreWith(t, smallPages, good),
		NewBucketName: newBucketName,
		Region:        "westeurope",
		ManyObjects:   1200,
		// Put Block of three blocks, then Put Block List (which carries the condition).
		LargeStreamBytes: 2<<20 + 8,
		Unsupported: []conformance.Feature{
			// Azurite answers a wrong signature with 403 AuthorizationFailure, where Azure answers
			// 403 AuthenticationFailed; the store classifies Azure's codes (table test), and
			// TestWrongKeyIsRefused checks what Azurite gives. The blob stand-in answers as Azure.
			conformance.BadCredentials,
			// A container lives in one account, which has one region, and its name is the
			// account's alone.
			conformance.Regions, conformance.ForeignBuckets,
			// Azurite has no blob versioning (501) and no immutability policies;
			// TestConformanceWithBlobVersioning runs the suite with versions on the blob stand-in.
			conformance.Versions, conformance.Locks,
			// An account key defers only on the bucket reconcile's record, which no management
			// plane writes here: the deferral is checked through the management plane
			// (TestConformanceThroughTheManagementPlaneWithBlobVersioning).
			conformance.Deferral, conformance.DeferralReadBack,
		},
	})
}

// TestConformanceWithBlobVersioning runs the suite on test/stack/azure.BlobStandIn, an httptest server
// that plays the documented Azure Blob API where Azurite has nothing: account-level blob
// versioning (switched by the Versioning hook), listings with versions, deletes by version ID.
// It is a stand-in, not Azure (see its doc comment for what differs).
func TestConformanceWithBlobVersioning(t *testing.T) {
	blobs := azurestack.StartBlobStandIn()
	t.Cleanup(blobs.Close)
	data := blobs.SecretData()
	store := newStore(t, data)
	conformance.Run(t, conformance.Harness{
		Store:          store,
		MarkExcluded:   conformance.MarkerOf(store),
		SmallPages:     newStoreWith(t, smallPages, data),
		NewBucketName:  newBucketName,
		Region:         "westeurope",
		BadCredentials: newStore(t, with(data, "storageKey", azurestack.StandInKeys[1])),
		ManyObjects:    6000,
		SimulatedClock: true, // the stand-in's clock starts at 2025-01-01 and ticks by request
		// The data plane alone: no regions, no foreign accounts, no locks, no management policy
		// to read a deferral back (see the management-plane runs).
		Unsupported: []conformance.Feature{conformance.Regions, conformance.ForeignBuckets, conformance.Locks, conformance.Deferral, conformance.DeferralReadBack},
		Versioning: func(_ context.Context, _ string, on bool) error {
			blobs.SetVersioning(azurestack.AzuriteAccount, on) // versioning is the account's, as on Azure
			return nil
		},
	})
}

func TestConformanceThroughTheManagementPlane(t *testing.T) {
	arm := startARM(t)
	conformance.Run(t, conformance.Harness{
		Store:          armStoreWith(t, &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client(), ListPageSize: azuritePages}, arm.ServicePrincipal()),
		SmallPages:     armStoreWith(t, &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client(), ListPageSize: 3}, arm.ServicePrincipal()),
		NewBucketName:  newBucketName,
		Region:         "westeurope",
		OtherRegion:    "northeurope",
		BadCredentials: armStore(t, arm, with(arm.ServicePrincipal(), "clientSecret", "wrong-secret"), false),
		ForeignBucket: func(_ *testing.T) string {
			name := newBucketName()
			arm.PutAccount("someone-elses-group", azureprovider.AccountName(name), "westeurope", nil)
			return name
		},
		ManyObjects: 1200,
		// Azurite has no versioning and no immutability policies; the deferral is read back
		// version by version on the blob stand-in: see
		// TestConformanceThroughTheManagementPlaneWithBlobVersioning. The exclude mark is
		// the data plane's, covered by the runs above.
		Unsupported: []conformance.Feature{conformance.Versions, conformance.Locks, conformance.DeferralReadBack, conformance.ExcludeMark},
	})
}

// TestConformanceThroughTheManagementPlaneWithBlobVersioning runs the suite through the ARM
// stand-in with the blob stand-in (test/stack/azure.BlobStandIn) as the accounts' data plane, so that
// bucket deletion and the emptiness check meet versions too.
func TestConformanceThroughTheManagementPlaneWithBlobVersioning(t *testing.T) {
	blobs := azurestack.StartBlobStandIn()
	t.Cleanup(blobs.Close)
	arm := azurestack.StartARM(blobs.StandInEndpoint())
	t.Cleanup(arm.Close)
	small := &azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client(), ListPageSize: 3}
	store := armStore(t, arm, arm.ServicePrincipal(), false)
	conformance.Run(t, conformance.Harness{
		Store:          store,
		SmallPages:     armStoreWith(t, small, arm.ServicePrincipal()),
		NewBucketName:  newBucketName,
		Region:         "westeurope",
		OtherRegion:    "northeurope",
		BadCredentials: armStore(t, arm, with(arm.ServicePrincipal(), "clientSecret", "wrong-secret"), false),
		ForeignBucket: func(_ *testing.T) string {
			name := newBucketName()
			arm.PutAccount("someone-elses-group", azureprovider.AccountName(name), "westeurope", nil)
			return name
		},
		ManyObjects:    6000,
		SimulatedClock: true, // the stand-in's clock starts at 2025-01-01 and ticks by request
		Versioning: func(_ context.Context, _ string, on bool) error {
			blobs.SetVersioning(azurestack.StandInAccount, on)
			return nil
		},
		DeferralCovers: deferralCovers(arm, blobs, store),
		MarkExcluded:   conformance.MarkerOf(store),
		// The stand-ins keep no immutability policies.
		Unsupported: []conformance.Feature{conformance.Locks},
	})
}
