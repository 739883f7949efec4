// Package openstack is the providerConfig API of the OpenStack Swift backup extension.
package openstack

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
)

const (
	// APIVersion is this API's version.
	APIVersion = "openstack.backup.extensions.gardener.cloud/v1alpha1"
	// ProviderOpenStackAPIVersion is gardener-extension-provider-openstack's version, accepted so
	// that a seed's existing spec.backup.providerConfig works unchanged.
	ProviderOpenStackAPIVersion = "openstack.provider.extensions.gardener.cloud/v1alpha1"
	// KindBackupBucketConfig is the kind of a BackupBucket's providerConfig.
	KindBackupBucketConfig = "BackupBucketConfig"
)

// BackupBucketConfig is a BackupBucket's providerConfig.
type BackupBucketConfig struct {
	metav1.TypeMeta `json:",inline"`
	// Versioning keeps every version of an object in the container (Swift object versioning).
	// Deleting an entry then deletes every version.
	Versioning bool `json:"versioning,omitempty"`
	// Immutability is not offered by Swift; it is refused, never ignored.
	Immutability *Immutability `json:"immutability,omitempty"`
}

// Immutability is accepted by the decoder only to be refused with a clear message.
type Immutability struct {
	RetentionType   string          `json:"retentionType,omitempty"`
	RetentionPeriod metav1.Duration `json:"retentionPeriod,omitempty"`
	Mode            string          `json:"mode,omitempty"`
}

// DecodeBackupBucketConfig strictly decodes and validates a BackupBucket providerConfig.
func DecodeBackupBucketConfig(raw []byte) (*BackupBucketConfig, error) {
	return decode.ProviderConfig(raw, KindBackupBucketConfig, validate, APIVersion, ProviderOpenStackAPIVersion)
}

func validate(cfg *BackupBucketConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if cfg.Immutability != nil {
		errs = append(errs, field.Forbidden(path.Child("immutability"),
			"OpenStack Swift offers no object lock or retention: immutable backups cannot be provided on this provider"))
	}
	return errs
}
