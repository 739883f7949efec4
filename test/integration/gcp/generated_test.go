// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

func TestGeneratedServiceAccountKeys(t *testing.T) {
	const head = `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`
	env.GeneratedCredentialsFlow(t, framework.GeneratedCredentials{
		Operator: gcs.SecretData(),
		Config:   head + `,"generatedCredentials":{"rotation":{"gracePeriod":"1h"}}}`,
		Off:      head + `}`,
	})
}

// TestHandBackRevokesGeneratedServiceAccountKeys: a hand-back leaves no service-account key of
// this extension valid (issue 36): refused while the entry holds it, then the key is revoked on
// the GCS front's IAM stand-in, which then refuses it (framework.HandBackFlow).
func TestHandBackRevokesGeneratedServiceAccountKeys(t *testing.T) {
	const head = `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`
	env.HandBackFlow(t, framework.GeneratedCredentials{
		Operator: gcs.SecretData(),
		Config:   head + `,"generatedCredentials":{"rotation":{"gracePeriod":"1h"}}}`,
		Off:      head + `}`,
		HandBack: head + `,"handBack":true}`,
	})
}
