package aws_test

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

func TestGeneratedMinIOCredentials(t *testing.T) {
	const head = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]`
	env.GeneratedCredentialsFlow(t, framework.GeneratedCredentials{
		Operator: secretData(minio.Endpoint),
		Config:   head + `,"generatedCredentials":{"issuer":"MinIO"}}`,
		Off:      head + `}`,
	})
}
