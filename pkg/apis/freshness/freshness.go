// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package freshness is the providerConfig part every provider shares that sets how old an etcd's
// newest backups may be before the BackupsFresh condition of a BackupEntry turns False. It is set
// on a BackupBucket and read on each of its entries too (gardenlet copies the bucket's
// providerConfig into every extension BackupEntry of that bucket).
package freshness

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Settings is `backupFreshness:` in a BackupBucket's providerConfig. An unset field keeps the
// extension's default (its flags --full-snapshot-max-age and --delta-snapshot-max-age).
type Settings struct {
	// FullSnapshotMaxAge is the oldest the newest full snapshot of each etcd may be.
	FullSnapshotMaxAge *metav1.Duration `json:"fullSnapshotMaxAge,omitempty"`
	// DeltaSnapshotMaxAge is the oldest the newest snapshot of either kind may be.
	DeltaSnapshotMaxAge *metav1.Duration `json:"deltaSnapshotMaxAge,omitempty"`
}

// Validate checks the settings at path (the `backupFreshness` field): each age positive when
// set, and the delta age no longer than the full one when both are set.
func (s *Settings) Validate(path *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if d := s.FullSnapshotMaxAge; d != nil && d.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("fullSnapshotMaxAge"), d.Duration.String(), "must be positive"))
	}
	if d := s.DeltaSnapshotMaxAge; d != nil && d.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("deltaSnapshotMaxAge"), d.Duration.String(), "must be positive"))
	}
	if f, d := s.FullSnapshotMaxAge, s.DeltaSnapshotMaxAge; f != nil && d != nil && f.Duration > 0 && d.Duration > f.Duration {
		errs = append(errs, field.Invalid(path.Child("deltaSnapshotMaxAge"), d.Duration.String(),
			"must not be longer than fullSnapshotMaxAge ("+f.Duration.String()+"): a full snapshot counts as the newest snapshot of either kind"))
	}
	return errs
}

// Field is the `backupFreshness:` of every provider's BackupBucket config, inlined in each
// (`freshness.Field `+"`"+`json:",inline"`+"`"+`), which so implements Policy.
type Field struct {
	// BackupFreshness sets how old the newest backups of each etcd in the bucket may be before
	// the BackupsFresh condition of its BackupEntry turns False (default: the extension's flags).
	BackupFreshness *Settings `json:"backupFreshness,omitempty"`
}

// FreshnessSettings implements Policy.
func (f Field) FreshnessSettings() *Settings { return f.BackupFreshness }

// Policy is implemented by a provider's decoded BackupBucket config.
type Policy interface {
	// FreshnessSettings returns the config's backupFreshness, or nil if it sets none.
	FreshnessSettings() *Settings
}
