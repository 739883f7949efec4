// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package standin

import (
	"context"
	"testing"

	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// Azure is azure's started stand-in: Azurite's blob service, and the ARM stand-in in front of it
// (storage accounts, keys and identities for generated credentials).
type Azure struct {
	Azurite *stack.Azurite
	ARM     *stack.ARM
}

// azure: Azurite in existing-account mode (the operator's account key); Handle is the *Azure.
func init() {
	register(StandIn{
		Type: azureprovider.Type, Region: "westeurope", Tools: []string{"azurite"},
		// etcd-backup-restore's ABS store (abs_snapstore.go, readABSCredentialFiles);
		// bucketName is gardener's.
		EtcdBackupKeys: []string{"storageAccount", "storageKey", "domain", "bucketName"},
		Start: func(_ context.Context, _ testing.TB, region string) (*World, error) {
			azurite, err := stack.StartAzurite()
			if err != nil {
				return nil, err
			}
			arm := stack.StartARM(azurite.StandInEndpoint())
			cloud := framework.Registered(&azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client()})
			operator := azurite.SecretData()
			return &World{
				What:     "Azurite (Azure Blob emulator), existing-account mode",
				Where:    "Azurite http://" + azurite.Host + "/" + stack.AzuriteAccount,
				Cloud:    cloud,
				Operator: operator,
				Consumer: stack.ABSConsumer(azurite, stack.AzuriteAccount),
				Describe: probed(cloud, operator, region, "private container"),
				Handle:   &Azure{Azurite: azurite, ARM: arm},
				Stop:     func() { arm.Close(); azurite.Stop() },
			}, nil
		},
	})
}
