// Package azure is the providerConfig API of the Azure Blob backup extension.
package azure

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
)

const (
	// APIVersion is this API's version.
	APIVersion = "azure.backup.extensions.gardener.cloud/v1alpha1"
	// ProviderAzureAPIVersion is gardener-extension-provider-azure's version of the same kinds; it
	// is accepted so that a seed's existing spec.backup.providerConfig works unchanged.
	ProviderAzureAPIVersion = "azure.provider.extensions.gardener.cloud/v1alpha1"
	// KindBackupBucketConfig is the kind of a BackupBucket's providerConfig.
	KindBackupBucketConfig = "BackupBucketConfig"
)

// BackupBucketConfig is a BackupBucket's providerConfig.
type BackupBucketConfig struct {
	metav1.TypeMeta `json:",inline"`
	// Immutability sets a time-based immutability policy on the container.
	Immutability *ImmutableConfig `json:"immutability,omitempty"`
}

// RetentionTypeBucket is the only retention type: a policy on the whole container.
const RetentionTypeBucket = "bucket"

// ImmutableConfig is the container's time-based immutability policy.
type ImmutableConfig struct {
	// RetentionType must be "bucket".
	RetentionType string `json:"retentionType"`
	// RetentionPeriod is how long every blob is kept, in whole days (24h multiples), >= 1 day.
	RetentionPeriod metav1.Duration `json:"retentionPeriod"`
	// Locked locks the policy: from then on it can only be extended, never shortened or removed.
	Locked bool `json:"locked,omitempty"`
}

// DecodeBackupBucketConfig strictly decodes and validates a BackupBucket providerConfig (JSON or
// YAML). Empty input gives the defaults. Errors wrap objectstore.ErrInvalidConfig and name the
// field path.
func DecodeBackupBucketConfig(raw []byte) (*BackupBucketConfig, error) {
	return decode.ProviderConfig(raw, KindBackupBucketConfig, ValidateBackupBucketConfig, APIVersion, ProviderAzureAPIVersion)
}

// ValidateBackupBucketConfig validates a decoded config.
func ValidateBackupBucketConfig(cfg *BackupBucketConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if im := cfg.Immutability; im != nil {
		p := path.Child("immutability")
		if im.RetentionType != RetentionTypeBucket {
			errs = append(errs, field.NotSupported(p.Child("retentionType"), im.RetentionType, []string{RetentionTypeBucket}))
		}
		// Azure's policy period is whole days (1 to 146,000; a Duration cannot exceed that anyway).
		if d := im.RetentionPeriod.Duration; d < 24*time.Hour || d%(24*time.Hour) != 0 {
			errs = append(errs, field.Invalid(p.Child("retentionPeriod"), d.String(), "must be a whole number of days (a multiple of 24h), at least 24h"))
		}
	}
	return errs
}
