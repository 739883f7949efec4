// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package consumer_test

import (
	"context"
	"testing"

	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

const awsConfigHead = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]`

// aws beyond the operator's keys: a generated MinIO user, from an operator secret that names its
// region. Workload identity (roleARN and token) is not run: the sidecar's STS client always calls
// AWS's own STS endpoint for the region (stscreds.NewWebIdentityRoleProvider on a fixed
// aws.Config), so no stand-in can answer it here.
func init() {
	extras[awsprovider.Type] = extra{cases: func(t *testing.T, s standin.StandIn, w *standin.World, env *framework.Env) {
		minio := w.Handle.(*awsstack.MinIO)
		t.Run("generated MinIO user", func(t *testing.T) {
			t.Parallel()
			run(t, env, w.Consumer, mode{name: "generated MinIO user", operator: minio.SecretData(),
				config:    awsConfigHead + `,"generatedCredentials":{"issuer":"MinIO","rotation":{"gracePeriod":"15s"}}}`,
				generated: true, revokedRefused: true, keys: s.EtcdBackupKeys})
		})
		// A customer-provided key and the checksum modes on MinIO over TLS, with both versions.
		t.Run("customer key and checksum modes over TLS", func(t *testing.T) {
			t.Parallel()
			tlsMinIO, err := awsstack.StartMinIO(context.Background(), awsstack.MinIOOptions{Region: s.Region, TLS: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(tlsMinIO.Stop)
			t.Run("pinned etcd-backup-restore", func(t *testing.T) { runCustomerKey(t, env, w.Consumer, tlsMinIO) })
			t.Run("previous etcd-backup-restore", func(t *testing.T) { runCustomerKey(t, env, previous(t, w.Consumer), tlsMinIO) })
		})
	}}
}
