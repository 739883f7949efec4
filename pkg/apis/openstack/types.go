// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package openstack is the providerConfig API of the OpenStack Swift backup extension.
package openstack

import (
	"strings"
	"time"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
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
	// Field is `backupFreshness:`: how old the newest backups of each etcd may be.
	freshness.Field `json:",inline"`
	// CopyField is `copy:`: the second store every entry's snapshots are copied to.
	copystore.CopyField `json:",inline"`

	// Versioning keeps every version of an object in the container (Swift object versioning).
	// Deleting an entry then deletes every version.
	Versioning bool `json:"versioning,omitempty"`
	// Immutability is not offered by Swift; it is refused, never ignored.
	Immutability *Immutability `json:"immutability,omitempty"`
	// GeneratedCredentials, when set, publishes a Keystone application credential per bucket as
	// the bucket's generated secret, so that shoots get it instead of the operator's credentials.
	GeneratedCredentials *GeneratedCredentialsConfig `json:"generatedCredentials,omitempty"`
	// HandBack leaves the container in the state gardener-extension-provider-openstack v1.57.0
	// handles, before the operator switches the bucket back to it: versioning off and no
	// noncurrent version left (it deletes current objects only), read back before the reconcile
	// succeeds. It requires versioning: false and no generatedCredentials (docs/openstack.md,
	// "Taking over from and handing back to provider-openstack").
	HandBack bool `json:"handBack,omitempty"`
}

var _ freshness.Policy = (*BackupBucketConfig)(nil)

// DefaultRotationPeriod rotates application credentials monthly unless configured otherwise:
// they expire (see GeneratedCredentialsConfig), so they must be rotated.
const DefaultRotationPeriod = 30 * 24 * time.Hour

// GeneratedCredentialsConfig configures the application credentials issued per bucket.
type GeneratedCredentialsConfig struct {
	// Rotation (default period 720h: a credential expires two periods plus the grace period after
	// it was issued, so that a missed rotation does not interrupt backups at once) and
	// AllowPassThrough (a cloud that cannot check access rules).
	credentials.Generation `json:",inline"`

	// AccessRules restricts the credential to the bucket's container with Keystone access rules
	// (default true). Swift must check them (keystonemiddleware's service_type = object-store);
	// a credential the cloud refuses is revoked and reported, never published. false issues
	// project-wide credentials: only for clouds that cannot check access rules.
	AccessRules *bool `json:"accessRules,omitempty"`
	// Roles are the project roles the credential carries (default: all of the operator's).
	Roles []string `json:"roles,omitempty"`
}

// IssuerApplicationCredential issues a Keystone application credential per bucket: OpenStack's
// one issuer.
const IssuerApplicationCredential = "ApplicationCredential"

// HandsBack implements config.ProviderConfig.
func (c *BackupBucketConfig) HandsBack() bool { return c != nil && c.HandBack }

// GenerationSettings implements credentials.Policy, with the default rotation period.
func (c *BackupBucketConfig) GenerationSettings() *credentials.Settings {
	if c == nil || c.GeneratedCredentials == nil {
		return nil
	}
	g := c.GeneratedCredentials.Generation
	if g.Rotation.RotationPeriod() == 0 {
		r := credentials.Rotation{Period: &metav1.Duration{Duration: DefaultRotationPeriod}}
		if g.Rotation != nil {
			r.GracePeriod = g.Rotation.GracePeriod
		}
		g.Rotation = &r
	}
	return &credentials.Settings{Issuer: IssuerApplicationCredential, Generation: g}
}

// Lifetime is how long an application credential issued now stays valid.
func (c *BackupBucketConfig) Lifetime() time.Duration {
	g := c.GenerationSettings()
	return 2*g.RotationPeriod() + g.Grace()
}

// RestrictToContainer says whether credentials carry access rules.
func (c *GeneratedCredentialsConfig) RestrictToContainer() bool {
	return c == nil || c.AccessRules == nil || *c.AccessRules
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
	if g := cfg.GeneratedCredentials; g != nil {
		p := path.Child("generatedCredentials")
		errs = append(errs, g.Validate(p)...)
		if g.Rotation != nil && g.Rotation.Period == nil && g.Rotation.GracePeriod != nil && g.Rotation.GracePeriod.Duration >= DefaultRotationPeriod {
			errs = append(errs, field.Invalid(p.Child("rotation", "gracePeriod"), g.Rotation.GracePeriod.Duration.String(), "must be shorter than the default period of 720h"))
		}
		seen := map[string]bool{}
		for i, r := range g.Roles {
			rp := p.Child("roles").Index(i)
			switch {
			case r == "":
				errs = append(errs, field.Required(rp, "a role name"))
			case strings.TrimSpace(r) != r || strings.IndexFunc(r, unicode.IsControl) >= 0:
				errs = append(errs, field.Invalid(rp, r, "a role name without surrounding spaces or control characters (Keystone would not find the role)"))
			case seen[r]:
				errs = append(errs, field.Duplicate(rp, r))
			}
			seen[r] = true
		}
	}
	errs = append(errs, cfg.BackupFreshness.Validate(path.Child("backupFreshness"))...)
	errs = append(errs, cfg.Copy.Validate(path.Child("copy"), Type, decodeCopy, ValidateBucketName)...)
	errs = append(errs, cfg.Copy.ValidateHandBack(path, cfg.HandBack)...)
	if cfg.HandBack {
		if cfg.Versioning {
			errs = append(errs, field.Invalid(path.Child("versioning"), true,
				"must be false with handBack: provider-openstack lists and deletes current objects only, so versions would never be deleted"))
		}
		if cfg.GeneratedCredentials != nil {
			errs = append(errs, field.Forbidden(path.Child("generatedCredentials"),
				"must be removed before handBack, in an earlier change: provider-openstack neither knows, rotates nor revokes "+
					"application credentials, so the published one would expire and the shoots' backups stop; the hand-back then "+
					"revokes the retiring ones once no secret on the seed holds them, and is refused until then (docs/migrating.md)"))
		}
	}
	return errs
}

// decodeCopy is the strict decoding of copy.providerConfig: a BackupBucketConfig of this type.
func decodeCopy(raw []byte) error {
	_, err := DecodeBackupBucketConfig(raw)
	return err
}

// The copy of another type than this one (copy.type) is validated with this type's rules.
func init() { copystore.RegisterType(Type, decodeCopy, ValidateBucketName) }
