package azure

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
)

// Type is the extension type the Azure provider serves.
const Type = "azure"

// API is the SDK-free half of the Azure provider (config.API): the admission webhook and the
// core use it without linking the Azure SDK.
type API struct{}

var _ config.API = API{}

// Type implements config.API.
func (API) Type() string { return Type }

// DecodeBucketConfig implements config.API.
func (API) DecodeBucketConfig(raw []byte) (config.Bucket, error) {
	return config.Decoded(DecodeBackupBucketConfig(raw))
}

// ValidateBucketName implements config.API with Azure's container naming rules (names.go).
func (API) ValidateBucketName(name string) error { return ValidateBucketName(name) }
