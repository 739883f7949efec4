// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"testing"

	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestBucketAvailabilityFollowsTheStore with an account key (the operator's storage account):
// the container is deleted in Azurite behind the extension's back.
func TestBucketAvailabilityFollowsTheStore(t *testing.T) {
	env.AvailabilityFlow(t, framework.Availability{Operator: azurite.SecretData()})
}

// Azurite cannot regenerate keys: the ARM stand-in's accounts share Azurite's stand-in account,
// which accepts both of its key values whichever was "regenerated" (see test/stack/azure.ARM), so a key
// revoked behind the extension's back still answers the probe.
const noRevocation = "Azurite accepts a regenerated (revoked) account key (see test/stack/azure.ARM)"

// TestServicePrincipalBucketAvailabilityFollowsTheStore with a service principal (the ARM
// stand-in): the extension's storage account (and with it the container) is deleted behind its
// back; the generated key is rotated.
func TestServicePrincipalBucketAvailabilityFollowsTheStore(t *testing.T) {
	env.AvailabilityFlow(t, framework.Availability{Operator: arm.ServicePrincipal(), Generated: true, NoRevocation: noRevocation})
}

// TestServicePrincipalBucketAvailabilityFollowsItsContainer: only the container is deleted
// behind the extension's back (data plane and management plane), its account stays.
func TestServicePrincipalBucketAvailabilityFollowsItsContainer(t *testing.T) {
	env.AvailabilityFlow(t, framework.Availability{
		Operator: arm.ServicePrincipal(), Generated: true, NoRevocation: noRevocation,
		Delete: func(t *testing.T, bucket string) {
			secret, err := env.GeneratedSecret(t, bucket) // the account's key: its data plane
			if err != nil {
				t.Fatal(err)
			}
			if err := env.StoreFor(t, secret.Data).DeleteBucket(framework.Ctx(t), bucket); err != nil {
				t.Fatalf("deleting the container behind the extension's back: %v", err)
			}
			arm.DropContainer(azureprovider.AccountName(bucket), bucket)
		},
	})
}
