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
