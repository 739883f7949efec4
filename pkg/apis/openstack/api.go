package openstack

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"

// Type is the extension type the OpenStack provider serves.
const Type = "openstack"

// API is the provider's SDK-free half (config.API): what the admission webhook and the core
// check and decode without any cloud call.
type API struct{}

var (
	_ config.API    = API{}
	_ config.Bucket = (*BackupBucketConfig)(nil)
)

// Type implements config.API.
func (API) Type() string { return Type }

// DecodeBucketConfig implements config.API.
func (API) DecodeBucketConfig(raw []byte) (config.Bucket, error) {
	return config.Decoded(DecodeBackupBucketConfig(raw))
}

// ValidateBucketName implements config.API with Swift's container naming rules (names.go).
func (API) ValidateBucketName(name string) error { return ValidateBucketName(name) }
