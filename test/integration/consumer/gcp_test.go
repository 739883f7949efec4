// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package consumer_test

import (
	"testing"

	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

const gcpConfigHead = `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`

// gcp beyond the operator's service account key: a generated key. The GCS front keeps tokens
// minted before a key's deletion valid: the rotation is proven by the sidecar's rebuilt store and
// its next snapshot. Workload identity is not run: the sidecar accepts an external account
// configuration only with token_url https://sts.googleapis.com/v1/token
// (validateExternalAccountCredentials), which no stand-in can answer here.
func init() {
	extras[gcpprovider.Type] = extra{cases: func(t *testing.T, s standin.StandIn, w *standin.World, env *framework.Env) {
		t.Run("generated service account key", func(t *testing.T) {
			t.Parallel()
			run(t, env, w.Consumer, mode{name: "generated service account key", operator: w.Operator,
				config: gcpConfigHead + `,"generatedCredentials":{"rotation":{"gracePeriod":"15s"}}}`, generated: true, keys: s.EtcdBackupKeys})
		})
	}}
}
