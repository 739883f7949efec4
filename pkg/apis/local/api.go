package local

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"

// Type is the extension type (spec.type) the local provider serves: the type of Gardener's own
// local development setup (provider-local).
const Type = "local"

// API is the SDK-free half of the local provider (config.API): what the admission webhook and
// the core check and decode before the filesystem is touched.
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

// ValidateBucketName implements config.API with the directory naming rules (names.go).
func (API) ValidateBucketName(name string) error { return ValidateBucketName(name) }
