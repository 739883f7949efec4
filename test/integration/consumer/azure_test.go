// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package consumer_test

import (
	"testing"

	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
	azurestandin "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/azure"
)

const azureConfigHead = `{"apiVersion":"azure.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`

// azure beyond the operator's account key: keys generated on the ARM stand-in's account, with a
// service principal and with workload identity, one case after another. Azurite cannot regenerate keys (a regenerated key
// is the other of the two it accepts), so a revoked key is not refused: the rotation is proven by
// the sidecar's rebuilt store and its next snapshot only.
func init() {
	extras[azureprovider.Type] = extra{serial: true, cases: func(t *testing.T, s standin.StandIn, w *standin.World, env *framework.Env) {
		az := w.Handle.(*azurestandin.Azure)
		c := azurestack.ABSConsumer(az.Azurite, azurestack.StandInAccount)
		for _, m := range []mode{
			{name: "generated key (service principal)", operator: az.ARM.ServicePrincipal(),
				config: azureConfigHead + `,"rotation":{"gracePeriod":"15s"}}`, generated: true, keys: s.EtcdBackupKeys},
			{name: "generated key (workload identity)", operator: az.ARM.WorkloadIdentity(), workloadIdentity: true,
				config: azureConfigHead + `,"rotation":{"gracePeriod":"15s"}}`, generated: true, keys: s.EtcdBackupKeys},
		} {
			t.Run(m.name, func(t *testing.T) { run(t, env, c, m) })
		}
	}}
}
