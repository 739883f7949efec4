// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// entryCredentialsConfig is minioConfig with entryCredentials by MinIO: what gardenlet copies
// into every entry of the bucket (merged with the seed configuration, where the switch lives).
const entryCredentialsConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],"entryCredentials":{"issuer":"MinIO"}}`

// TestEntryCredentialWithTheRealEtcdBackupRestore: an entry with entryCredentials gets a MinIO
// service account of its own in etcd-backup; the real etcd-backup-restore snapshots, collects
// its garbage and restores with it; it cannot restore another entry's snapshots; the entry's
// deletion revokes it (framework.EntryCredentialsFlow).
func TestEntryCredentialWithTheRealEtcdBackupRestore(t *testing.T) {
	env.EntryCredentialsFlow(t, framework.EntryCredentials{
		Operator: secretData(minio.Endpoint), BucketConfig: minioConfig, EntryConfig: entryCredentialsConfig, Issuer: "MinIO",
		CredentialID: func(data map[string][]byte) string { return string(data["accessKeyID"]) },
		Consumer:     awsstack.S3Consumer, Refused: "AccessDenied",
	})
}
