// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// ABSConsumer is how etcd-druid runs etcd-backup-restore for an azure entry on an Azurite account:
// AZURE_APPLICATION_CREDENTIALS at the mounted secret, and --store-endpoint-override (etcd-druid
// sets it from spec.backup.store.endpointOverride): the sidecar builds
// https://<storageAccount>.<domain>/ from the secret, which cannot reach Azurite (plain HTTP, the
// account in the path).
func ABSConsumer(azurite *Azurite, account string) stack.Consumer {
	return stack.Consumer{StorageProvider: "ABS", CredentialsEnv: "AZURE_APPLICATION_CREDENTIALS",
		Flags: []string{"--store-endpoint-override=http://" + azurite.Host + "/" + account}}
}
