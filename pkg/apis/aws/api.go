package aws

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
)

// Type is the extension type (spec.type) the AWS provider serves.
const Type = "aws"

// API is the SDK-free half of the AWS provider (config.API): what the admission webhook checks
// and the core decodes before any S3 call.
type API struct{}

var (
	_ config.API    = API{}
	_ config.Bucket = (*BackupBucketConfig)(nil)
)

// Type implements config.API.
func (API) Type() string { return Type }

// DecodeBucketConfig implements config.API with DecodeBackupBucketConfig.
func (API) DecodeBucketConfig(raw []byte) (config.Bucket, error) {
	return config.Decoded(DecodeBackupBucketConfig(raw))
}

// ValidateBucketName implements config.API with S3's naming rules (names.go).
func (API) ValidateBucketName(name string) error { return ValidateBucketName(name) }
