package gcp

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
)

// Type is the extension type (spec.type) of the GCS provider.
const Type = "gcp"

// API is the SDK-free half of the GCS provider (config.API): what the admission webhook checks
// without linking the cloud SDK.
type API struct{}

var _ config.API = API{}

// Type implements config.API.
func (API) Type() string { return Type }

// DecodeBucketConfig implements config.API. On error it returns a nil interface, not a typed
// nil pointer, so that callers never mistake a failed decode for the defaults.
func (API) DecodeBucketConfig(raw []byte) (config.Bucket, error) {
	return config.Decoded(DecodeBackupBucketConfig(raw))
}

// ValidateBucketName implements config.API with GCS's bucket naming rules (names.go).
func (API) ValidateBucketName(name string) error { return ValidateBucketName(name) }
