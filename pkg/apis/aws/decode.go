// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/immutability"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// DecodeBackupBucketConfig strictly decodes and validates a BackupBucket providerConfig (JSON or
// YAML). Empty input gives the defaults. Errors wrap objectstore.ErrInvalidConfig and name the
// field path.
func DecodeBackupBucketConfig(raw []byte) (*BackupBucketConfig, error) {
	return decode.ProviderConfig(raw, KindBackupBucketConfig, ValidateBackupBucketConfig, APIVersion, ProviderAWSAPIVersion)
}

// DecodeWorkloadIdentityConfig strictly decodes a workload identity secret's "config" key.
func DecodeWorkloadIdentityConfig(raw []byte) (*WorkloadIdentityConfig, error) {
	cfg := &WorkloadIdentityConfig{}
	if err := decode.Strict(raw, cfg, field.NewPath("config"), KindWorkloadIdentityConfig, APIVersion, ProviderAWSAPIVersion); err != nil {
		return nil, err
	}
	if cfg.RoleARN == "" || !strings.HasPrefix(cfg.RoleARN, "arn:") {
		return nil, objectstore.Invalidf("%s", field.Invalid(field.NewPath("config", "roleARN"), cfg.RoleARN, "must be an IAM role ARN"))
	}
	return cfg, nil
}

// ValidateBackupBucketConfig validates a decoded config.
func ValidateBackupBucketConfig(cfg *BackupBucketConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if g := cfg.GeneratedCredentials; g != nil {
		p := path.Child("generatedCredentials")
		if g.Issuer != IssuerIAM && g.Issuer != IssuerMinIO {
			errs = append(errs, field.NotSupported(p.Child("issuer"), g.Issuer, []string{IssuerIAM, IssuerMinIO}))
		}
		errs = append(errs, g.Validate(p)...)
	}
	if e := cfg.EntryCredentials; e != nil {
		p := path.Child("entryCredentials")
		if e.Issuer != IssuerIAM && e.Issuer != IssuerMinIO {
			errs = append(errs, field.NotSupported(p.Child("issuer"), e.Issuer, []string{IssuerIAM, IssuerMinIO}))
		}
		errs = append(errs, e.Validate(p)...)
	}
	if im := cfg.Immutability; im != nil {
		p := path.Child("immutability")
		errs = append(errs, immutability.Validate(p, im.RetentionType, im.RetentionPeriod.Duration, immutability.WholeDays)...)
		if im.Mode != ModeGovernance && im.Mode != ModeCompliance {
			errs = append(errs, field.NotSupported(p.Child("mode"), im.Mode, []string{ModeGovernance, ModeCompliance}))
		}
	}
	if enc := cfg.Encryption; enc != nil {
		p := path.Child("encryption")
		switch enc.Type {
		case EncryptionSSES3:
			if enc.KMSKeyID != "" {
				errs = append(errs, field.Forbidden(p.Child("kmsKeyID"), "only allowed with type SSE-KMS"))
			}
		case EncryptionSSEKMS:
			if enc.KMSKeyID == "" {
				errs = append(errs, field.Required(p.Child("kmsKeyID"), "required with type SSE-KMS"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), enc.Type, []string{EncryptionSSES3, EncryptionSSEKMS}))
		}
		if cfg.Disabled(SettingDefaultEncryption) {
			errs = append(errs, field.Forbidden(p, "cannot be set while disabledSettings lists DefaultEncryption"))
		}
	}
	seen := map[Setting]bool{}
	for i, s := range cfg.DisabledSettings {
		p := path.Child("disabledSettings").Index(i)
		if !slices.Contains(AllSettings, s) {
			errs = append(errs, field.NotSupported(p, s, AllSettings))
		}
		if seen[s] {
			errs = append(errs, field.Duplicate(p, s))
		}
		seen[s] = true
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
