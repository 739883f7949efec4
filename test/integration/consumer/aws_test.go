package consumer_test

import (
	"context"
	"testing"

	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const awsConfigHead = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]`

// The keys etcd-backup-restore's S3 store reads (s3_snapstore.go, readAWSCredentialFromDir).
var s3Keys = []string{"region", "accessKeyID", "secretAccessKey", "endpoint", "s3ForcePathStyle", "bucketName"}

// Workload identity (roleARN and token) is not run: the sidecar's STS client always calls AWS's
// own STS endpoint for the region (stscreds.NewWebIdentityRoleProvider on a fixed aws.Config), so
// no stand-in can answer it here.
func TestAWS(t *testing.T) {
	t.Parallel()
	minio, err := stack.StartMinIO(context.Background(), stack.MinIOOptions{Region: "eu-central-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(minio.Stop)
	env, err := framework.Start(&awsprovider.Provider{}, "eu-central-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)

	for _, m := range []mode{
		{name: "operator static keys", operator: minio.SecretData(), config: awsConfigHead + `}`, keys: s3Keys},
		{
			name: "generated MinIO user", operator: minio.SecretData(),
			config:    awsConfigHead + `,"generatedCredentials":{"issuer":"MinIO","rotation":{"gracePeriod":"15s"}}}`,
			generated: true, revokedRefused: true, keys: s3Keys,
		},
	} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			run(t, env, stack.S3Consumer, m)
		})
	}
}
