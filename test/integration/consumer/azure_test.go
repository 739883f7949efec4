package consumer_test

import (
	"testing"

	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const azureConfigHead = `{"apiVersion":"azure.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`

// The keys etcd-backup-restore's ABS store reads (abs_snapstore.go, readABSCredentialFiles):
// storageAccount, storageKey and domain; bucketName is gardener's.
var absKeys = []string{"storageAccount", "storageKey", "domain", "bucketName"}

func TestAzure(t *testing.T) {
	t.Parallel()
	azurite, err := stack.StartAzurite()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(azurite.Stop)
	arm := stack.StartARM(azurite.StandInEndpoint())
	t.Cleanup(arm.Close)
	env, err := framework.Start(&azureprovider.Provider{Cloud: arm.Cloud(), ManagementTransport: arm.Client()}, "westeurope")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)

	// Azurite cannot regenerate keys (a regenerated key is the other of the two it accepts), so
	// a revoked key is not refused: the rotation is proven by the sidecar's rebuilt store and
	// its next snapshot only.
	for _, c := range []struct {
		mode
		account string
	}{
		{mode{name: "operator account key", operator: azurite.SecretData(), keys: absKeys}, stack.AzuriteAccount},
		{mode{name: "generated key (service principal)", operator: arm.ServicePrincipal(),
			config: azureConfigHead + `,"rotation":{"gracePeriod":"15s"}}`, generated: true, keys: absKeys}, stack.StandInAccount},
		{mode{name: "generated key (workload identity)", operator: arm.WorkloadIdentity(), workloadIdentity: true,
			config: azureConfigHead + `,"rotation":{"gracePeriod":"15s"}}`, generated: true, keys: absKeys}, stack.StandInAccount},
	} {
		t.Run(c.name, func(t *testing.T) {
			run(t, env, stack.ABSConsumer(azurite, c.account), c.mode)
		})
	}
}
