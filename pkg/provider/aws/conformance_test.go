// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

func TestConformanceOnMinIO(t *testing.T) {
	proxy, err := stack.StartProxy(minio.Endpoint, stack.ProxyOptions{ForeignPrefix: "someone-elses-"})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	data := withoutRegion(withData(minio.SecretData(), "endpoint", proxy.URL))
	store := newStoreWith(t, &awsprovider.Provider{}, data, minioConfig())
	conformance.Run(t, conformance.Harness{
		Store:          store,
		MarkExcluded:   conformance.MarkerOf(store),
		NewBucketName:  newBucketName,
		Region:         "eu-central-1",
		OtherRegion:    "us-west-2",
		BadCredentials: newStoreWith(t, &awsprovider.Provider{}, withoutRegion(withData(minio.SecretData(), "secretAccessKey", "wrong")), minioConfig()),
		ForeignBucket: func(t *testing.T) string {
			t.Cleanup(func() {
				if n := proxy.ForeignWrites.Load(); n != 0 {
					t.Errorf("%d writes reached someone else's bucket", n)
				}
			})
			return "someone-elses-" + newBucketName()
		},
		ManyObjects: 2500,
		// A multipart upload of two parts (the conditions are checked at its completion).
		LargeStreamBytes: 16<<20 + 8,
		Versioning:       setVersioning,
		SmallPages:       newStoreWith(t, &awsprovider.Provider{ListPageSize: 2}, data, minioConfig()),
		// MinIO enables Object Lock only when a bucket is created (409 InvalidBucketState on an
		// existing one): the locked-objects case gets a bucket made with a governance default
		// retention, which is then dropped again by hand (the lock stays on; the extension keeps
		// a retention it finds), so that only what Lock holds is locked.
		LockableBucket: func(t *testing.T) string {
			ctx := context.Background()
			name := newBucketName()
			store := newStoreWith(t, &awsprovider.Provider{}, data, immutable(awsapi.ModeGovernance, 1))
			if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "eu-central-1"}); err != nil {
				t.Fatalf("EnsureBucket(%q) with Object Lock: %v", name, err)
			}
			if _, err := minio.S3Client().PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: &name,
				ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}}); err != nil {
				t.Fatalf("dropping the default retention of %q: %v", name, err)
			}
			return name
		},
		DeferralCovers: deferralCovers,
		Lock: func(ctx context.Context, bucket, key string, until time.Time) error {
			_, err := minio.S3Client().PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: &bucket, Key: &key,
				Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &until}})
			return err
		},
		// A governance retention is cleared with its bypass permission.
		Unlock: func(ctx context.Context, bucket, key string) error {
			_, err := minio.S3Client().PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: &bucket, Key: &key,
				BypassGovernanceRetention: aws.Bool(true), Retention: &types.ObjectLockRetention{}})
			return err
		},
	})
}

// setVersioning switches a bucket's versioning on (Enabled) or off (Suspended: S3 cannot go
// back to never versioned).
func setVersioning(ctx context.Context, bucket string, on bool) error {
	status := types.BucketVersioningStatusSuspended
	if on {
		status = types.BucketVersioningStatusEnabled
	}
	_, err := minio.S3Client().PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &bucket, VersioningConfiguration: &types.VersioningConfiguration{Status: status}})
	return err
}

// minioConfig switches off what MinIO does not implement, as an operator of MinIO would.
func minioConfig() *awsapi.BackupBucketConfig {
	return &awsapi.BackupBucketConfig{DisabledSettings: []awsapi.Setting{awsapi.SettingPublicAccessBlock, awsapi.SettingMultipartAbortLifecycle}}
}
