package aws_test

import (
	"testing"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

func TestConformanceOnMinIO(t *testing.T) {
	proxy, err := stack.StartProxy(minio.Endpoint, stack.ProxyOptions{ForeignPrefix: "someone-elses-"})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	conformance.Run(t, conformance.Harness{
		Store:          newStore(t, withoutRegion(withData(minio.SecretData(), "endpoint", proxy.URL))),
		Config:         minioConfig(),
		NewBucketName:  newBucketName,
		Region:         "eu-central-1",
		OtherRegion:    "us-west-2",
		BadCredentials: newStore(t, withoutRegion(withData(minio.SecretData(), "secretAccessKey", "wrong"))),
		ForeignBucket: func(t *testing.T) string {
			t.Cleanup(func() {
				if n := proxy.ForeignWrites.Load(); n != 0 {
					t.Errorf("%d writes reached someone else's bucket", n)
				}
			})
			return "someone-elses-" + newBucketName()
		},
		ManyObjects: 2500,
	})
}

// minioConfig switches off what MinIO does not implement, as an operator of MinIO would.
func minioConfig() *awsapi.BackupBucketConfig {
	return &awsapi.BackupBucketConfig{DisabledSettings: []awsapi.Setting{awsapi.SettingPublicAccessBlock, awsapi.SettingMultipartAbortLifecycle}}
}
