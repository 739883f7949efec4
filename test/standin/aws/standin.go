// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

// aws: MinIO with a KMS key. The operator's secret is the example's shape (no region key: the
// bucket's spec.region reaches the store); Handle is the *awsstack.MinIO.
func init() {
	standin.Register(standin.StandIn{
		Type: awsprovider.Type, Region: "eu-central-1", Tools: []string{"minio"},
		// etcd-backup-restore's S3 store (s3_snapstore.go, readAWSCredentialFromDir).
		EtcdBackupKeys: []string{"region", "accessKeyID", "secretAccessKey", "endpoint", "s3ForcePathStyle", "bucketName"},
		Start: func(ctx context.Context, _ testing.TB, region string) (*standin.World, error) {
			minio, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region})
			if err != nil {
				return nil, err
			}
			operator := maps.Clone(minio.SecretData())
			delete(operator, "region")
			return &standin.World{
				What:     "MinIO (S3-compatible), with a KMS key for default encryption",
				Where:    fmt.Sprintf("MinIO %s, region %s", minio.Endpoint, minio.Region),
				Cloud:    framework.Registered(&awsprovider.Provider{}),
				Operator: operator,
				// MinIO implements neither the public access block nor multipart-abort lifecycle rules.
				ProviderConfig: `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`,
				Consumer:       awsstack.S3Consumer,
				Describe: func(ctx context.Context, name string) (string, error) {
					enc, err := minio.S3Client().GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: &name})
					if err != nil {
						return "", err
					}
					return fmt.Sprintf("default encryption %s; TLS-only bucket policy set", enc.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm), nil
				},
				Handle: minio,
				Stop:   minio.Stop,
			}, nil
		},
	})
}
