// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package azure is the providerConfig API of the Azure Blob backup extension.
package azure

import (
	"time"

	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/immutability"
)

const (
	// APIVersion is this API's version.
	APIVersion = "azure.backup.extensions.gardener.cloud/v1alpha1"
	// ProviderAzureAPIVersion is gardener-extension-provider-azure's version of the same kinds; it
	// is accepted so that a seed's existing spec.backup.providerConfig works unchanged.
	ProviderAzureAPIVersion = "azure.provider.extensions.gardener.cloud/v1alpha1"
	// KindBackupBucketConfig is the kind of a BackupBucket's providerConfig.
	KindBackupBucketConfig = "BackupBucketConfig"
	// KindWorkloadIdentityConfig is the kind of a workload identity secret's "config" key.
	KindWorkloadIdentityConfig = "WorkloadIdentityConfig"
)

// BackupBucketConfig is a BackupBucket's providerConfig.
type BackupBucketConfig struct {
	metav1.TypeMeta `json:",inline"`
	// Field is `backupFreshness:`: how old the newest backups of each etcd may be.
	freshness.Field `json:",inline"`
	// CopyField is `copy:`: the second store every entry's snapshots are copied to.
	copystore.CopyField `json:",inline"`

	// Immutability sets a time-based immutability policy on the container (service principal or
	// workload identity secrets only: it is a management-plane setting).
	Immutability *ImmutableConfig `json:"immutability,omitempty"`
	// CloudConfiguration names the Azure cloud. Default: from the region ("china*": AzureChina,
	// "usgov*"/"usdod*": AzureGovernment), else AzurePublic.
	CloudConfiguration *CloudConfiguration `json:"cloudConfiguration,omitempty"`
	// StorageAccount configures the storage account the extension creates.
	StorageAccount *StorageAccountConfig `json:"storageAccount,omitempty"`
	// Rotation configures the rotation of the generated secret's account key.
	Rotation *credentials.Rotation `json:"rotation,omitempty"`
	// SoftDelete, when set, converges the account's soft delete of blobs and containers (unset:
	// the account's setting is left alone).
	SoftDelete *SoftDeleteConfig `json:"softDelete,omitempty"`
	// RotationConfig is gardener-extension-provider-azure's key rotation (v1.62.1
	// pkg/apis/azure/v1alpha1/types_backup.go:31-57), accepted so that a BackupBucket taken over
	// keeps its providerConfig: it is read as rotation with period rotationPeriodDays days and a
	// grace of one day less (the incumbent keeps the previous key until the next rotation; a
	// grace must be shorter than the period). expirationPeriodDays is accepted and not applied:
	// the key expiration policy the incumbent set on the account stays as it is. Not together
	// with rotation.
	RotationConfig *IncumbentRotationConfig `json:"rotationConfig,omitempty"`
	// HandBack prepares the bucket for gardener-extension-provider-azure to take it back (service
	// principal or workload identity secrets only): the account's management policy is written in
	// that extension's form (its one rule "delete-backupentry", which also deletes what this
	// extension deferred) and read back, and the deferral record is removed. Only an account
	// adopted from provider-azure can be handed back. See docs/azure.md, "Taking over from and
	// handing back to provider-azure".
	HandBack bool `json:"handBack,omitempty"`
}

var _ freshness.Policy = (*BackupBucketConfig)(nil)

// IncumbentRotationConfig is gardener-extension-provider-azure's rotationConfig.
type IncumbentRotationConfig struct {
	RotationPeriodDays   int32  `json:"rotationPeriodDays"`
	ExpirationPeriodDays *int32 `json:"expirationPeriodDays,omitempty"`
}

// SoftDeleteConfig keeps deleted blobs and containers recoverable for a number of days (0: off).
type SoftDeleteConfig struct {
	BlobRetentionDays      int32 `json:"blobRetentionDays"`
	ContainerRetentionDays int32 `json:"containerRetentionDays"`
}

// Clouds by name.
const (
	CloudAzurePublic     = "AzurePublic"
	CloudAzureChina      = "AzureChina"
	CloudAzureGovernment = "AzureGovernment"
)

// CloudConfiguration names an Azure cloud.
type CloudConfiguration struct {
	Name string `json:"name"`
}

// StorageAccountConfig configures the storage account the extension creates.
type StorageAccountConfig struct {
	// SKUName is the account's redundancy (default Standard_ZRS).
	SKUName string `json:"skuName,omitempty"`
}

// DefaultSKUName is the redundancy of a storage account unless configured.
const DefaultSKUName = "Standard_ZRS"

// SKUNames are the redundancies a backup account may have (Standard tier: premium accounts
// cannot hold block blobs in StorageV2).
var SKUNames = []string{"Standard_LRS", "Standard_ZRS", "Standard_GRS", "Standard_RAGRS", "Standard_GZRS", "Standard_RAGZRS"}

// CloudName is the configured cloud, or the one the region belongs to.
func (c *BackupBucketConfig) CloudName(region string) string {
	if c != nil && c.CloudConfiguration != nil {
		return c.CloudConfiguration.Name
	}
	switch r := strings.ToLower(region); {
	case strings.HasPrefix(r, "china"):
		return CloudAzureChina
	case strings.HasPrefix(r, "usgov"), strings.HasPrefix(r, "usdod"):
		return CloudAzureGovernment
	}
	return CloudAzurePublic
}

// SKU is the configured account redundancy or the default.
func (c *BackupBucketConfig) SKU() string {
	if c != nil && c.StorageAccount != nil && c.StorageAccount.SKUName != "" {
		return c.StorageAccount.SKUName
	}
	return DefaultSKUName
}

// IssuerAccountKey publishes a key of the storage account the extension created for the bucket:
// Azure's one issuer. It is always asked for, because shoots reach an account the extension
// manages only with its key; the provider builds it from management-plane credentials (a
// service principal or workload identity) and none from an account key secret, whose key shoots
// then use as it is.
const IssuerAccountKey = "AccountKey"

// HandsBack implements config.ProviderConfig.
func (c *BackupBucketConfig) HandsBack() bool { return c != nil && c.HandBack }

// GenerationSettings implements credentials.Policy: always the account key, with the keys'
// rotation (see IssuerAccountKey).
func (c *BackupBucketConfig) GenerationSettings() *credentials.Settings {
	var r *credentials.Rotation
	if c != nil {
		r = c.Rotation
		if rc := c.RotationConfig; r == nil && rc != nil && rc.RotationPeriodDays >= 2 {
			day := 24 * time.Hour
			r = &credentials.Rotation{
				Period:      &metav1.Duration{Duration: time.Duration(rc.RotationPeriodDays) * day},
				GracePeriod: &metav1.Duration{Duration: time.Duration(rc.RotationPeriodDays-1) * day},
			}
		}
	}
	return &credentials.Settings{Issuer: IssuerAccountKey, Generation: credentials.Generation{Rotation: r}}
}

// WorkloadIdentityConfig is the "config" key of a workload identity secret
// (gardener-extension-provider-azure's kind of the same name).
type WorkloadIdentityConfig struct {
	metav1.TypeMeta `json:",inline"`

	ClientID       string `json:"clientID"`
	TenantID       string `json:"tenantID"`
	SubscriptionID string `json:"subscriptionID"`
}

// DecodeWorkloadIdentityConfig strictly decodes a workload identity secret's "config" key.
func DecodeWorkloadIdentityConfig(raw []byte) (*WorkloadIdentityConfig, error) {
	path := field.NewPath("config")
	cfg := &WorkloadIdentityConfig{}
	if err := decode.Strict(raw, cfg, path, KindWorkloadIdentityConfig, APIVersion, ProviderAzureAPIVersion); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	for name, v := range map[string]string{"clientID": cfg.ClientID, "tenantID": cfg.TenantID, "subscriptionID": cfg.SubscriptionID} {
		if v == "" {
			errs = append(errs, field.Required(path.Child(name), ""))
		}
	}
	return cfg, decode.Invalid(errs)
}

// RetentionTypeBucket is the only retention type: a policy on the whole container.
const RetentionTypeBucket = immutability.RetentionTypeBucket

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
		// Azure's policy period is whole days (1 to 146,000; a Duration cannot exceed that anyway).
		errs = append(errs, immutability.Validate(path.Child("immutability"), im.RetentionType, im.RetentionPeriod.Duration, immutability.WholeDays)...)
	}
	if cc := cfg.CloudConfiguration; cc != nil {
		// provider-azure matches the names case-insensitively (v1.62.1
		// pkg/azure/client/helper.go:124-129, storage.go:40-46), so a name it accepts is accepted
		// here too, and written in its canonical form for the provider, which matches exactly.
		clouds := []string{CloudAzurePublic, CloudAzureChina, CloudAzureGovernment}
		if i := slices.IndexFunc(clouds, func(c string) bool { return strings.EqualFold(c, cc.Name) }); i >= 0 {
			cc.Name = clouds[i]
		} else {
			errs = append(errs, field.NotSupported(path.Child("cloudConfiguration", "name"), cc.Name, clouds))
		}
	}
	if sa := cfg.StorageAccount; sa != nil && sa.SKUName != "" && !slices.Contains(SKUNames, sa.SKUName) {
		errs = append(errs, field.NotSupported(path.Child("storageAccount", "skuName"), sa.SKUName, SKUNames))
	}
	if sd := cfg.SoftDelete; sd != nil {
		p := path.Child("softDelete")
		for name, days := range map[string]int32{"blobRetentionDays": sd.BlobRetentionDays, "containerRetentionDays": sd.ContainerRetentionDays} {
			if days < 0 || days > 365 {
				errs = append(errs, field.Invalid(p.Child(name), days, "must be 0 (off) to 365 days"))
			}
		}
	}
	errs = append(errs, cfg.Rotation.Validate(path.Child("rotation"))...)
	if rc := cfg.RotationConfig; rc != nil {
		p := path.Child("rotationConfig")
		switch {
		case cfg.Rotation != nil:
			errs = append(errs, field.Forbidden(p, "gardener-extension-provider-azure's rotationConfig is read as rotation; set only one of them"))
		case rc.RotationPeriodDays < 2:
			errs = append(errs, field.Invalid(p.Child("rotationPeriodDays"), rc.RotationPeriodDays, "must be at least 2 days"))
		}
		if e := rc.ExpirationPeriodDays; e != nil && *e <= rc.RotationPeriodDays {
			errs = append(errs, field.Invalid(p.Child("expirationPeriodDays"), *e, "must be greater than the rotation period"))
		}
	}
	errs = append(errs, cfg.BackupFreshness.Validate(path.Child("backupFreshness"))...)
	errs = append(errs, cfg.Copy.Validate(path.Child("copy"), Type, decodeCopy, ValidateBucketName)...)
	errs = append(errs, cfg.Copy.ValidateHandBack(path, cfg.HandBack)...)
	return errs
}

// decodeCopy is the strict decoding of copy.providerConfig: a BackupBucketConfig of this type.
func decodeCopy(raw []byte) error {
	_, err := DecodeBackupBucketConfig(raw)
	return err
}

// The copy of another type than this one (copy.type) is validated with this type's rules.
func init() { copystore.RegisterType(Type, decodeCopy, ValidateBucketName) }
