// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
)

// DecodeBackupBucketConfig strictly decodes and validates a BackupBucket providerConfig; empty
// input is the defaults.
func DecodeBackupBucketConfig(raw []byte) (*BackupBucketConfig, error) {
	return decode.ProviderConfig(raw, KindBackupBucketConfig, validate, APIVersion)
}

func validate(cfg *BackupBucketConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if cfg.Immutability != nil {
		errs = append(errs, field.Forbidden(path.Child("immutability"),
			"a local directory offers no retention lock: immutable backups cannot be provided on this provider"))
	}
	if cfg.GeneratedCredentials != nil {
		errs = append(errs, field.Forbidden(path.Child("generatedCredentials"),
			"a local directory has no credentials to issue: shoots reach it through its host path"))
	}
	errs = append(errs, cfg.BackupFreshness.Validate(path.Child("backupFreshness"))...)
	return append(errs, cfg.Copy.Validate(path.Child("copy"), Type, decodeCopy, ValidateBucketName)...)
}

// decodeCopy is the strict decoding of copy.providerConfig: a BackupBucketConfig of this type.
func decodeCopy(raw []byte) error {
	_, err := DecodeBackupBucketConfig(raw)
	return err
}

// The copy of another type than this one (copy.type) is validated with this type's rules.
func init() { copystore.RegisterType(Type, decodeCopy, ValidateBucketName) }
