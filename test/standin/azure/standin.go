// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"testing"

	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

// Azure is azure's started stand-in: Azurite's blob service, and the ARM stand-in in front of it
// (storage accounts, keys and identities for generated credentials).
type Azure struct {
	Azurite *azurestack.Azurite
	ARM     *azurestack.ARM
}

// azure: Azurite in existing-account mode (the operator's account key); Handle is the *Azure.
func init() {
	standin.Register(standin.StandIn{
		Type: azureprovider.Type, Region: "westeurope", Tools: []string{"azurite"},
		// etcd-backup-restore's ABS store (abs_snapstore.go, readABSCredentialFiles);
		// bucketName is gardener's.
		EtcdBackupKeys: []string{"storageAccount", "storageKey", "domain", "bucketName"},
		Start: func(_ context.Context, _ testing.TB, region string) (*standin.World, error) {
			azurite, err := azurestack.StartAzurite()
			if err != nil {
				return nil, err
			}
			arm := azurestack.StartARM(azurite.StandInEndpoint())
			cloud := framework.Registered(&azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client()})
			operator := azurite.SecretData()
			return &standin.World{
				What:     "Azurite (Azure Blob emulator), existing-account mode",
				Where:    "Azurite http://" + azurite.Host + "/" + azurestack.AzuriteAccount,
				Cloud:    cloud,
				Operator: operator,
				Consumer: azurestack.ABSConsumer(azurite, azurestack.AzuriteAccount),
				Describe: standin.Probed(cloud, operator, region, "private container"),
				Handle:   &Azure{Azurite: azurite, ARM: arm},
				Stop:     func() { arm.Close(); azurite.Stop() },
			}, nil
		},
	})
}
