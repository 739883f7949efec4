// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"encoding/json"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	gcpstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/gcp"
)

const (
	gcpBucketConfig = `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`
	// gcpEntryCredentialsConfig is gcpBucketConfig with entryCredentials: what gardenlet copies
	// into every entry of the bucket (merged with the seed configuration, where the switch lives).
	gcpEntryCredentialsConfig = `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","entryCredentials":{"issuer":"ServiceAccountKey"}}`
)

// keyID is the private_key_id of the service-account key file a secret holds.
func keyID(data map[string][]byte) string {
	var key struct {
		PrivateKeyID string `json:"private_key_id"`
	}
	_ = json.Unmarshal(data["serviceaccount.json"], &key)
	return key.PrivateKeyID
}

// TestEntryCredentialWithTheRealEtcdBackupRestore: an entry with entryCredentials gets a key of
// a service account of its own, bound on its managed folder only, in etcd-backup; the real
// etcd-backup-restore snapshots (chunked uploads and composes), collects its garbage and
// restores with it through the GCS front, which enforces the folder's IAM policy; it cannot
// restore another entry's snapshots; the entry's deletion revokes it.
func TestEntryCredentialWithTheRealEtcdBackupRestore(t *testing.T) {
	env.EntryCredentialsFlow(t, framework.EntryCredentials{
		Operator: gcs.SecretData(), BucketConfig: gcpBucketConfig, EntryConfig: gcpEntryCredentialsConfig, Issuer: "ServiceAccountKey",
		CredentialID: keyID, Consumer: gcpstack.GCSConsumer(t, gcs), Refused: "Error 403",
	})
}
