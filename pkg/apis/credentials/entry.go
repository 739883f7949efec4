// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package credentials

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultMigrationGracePeriod is how long the credential of an entry migrated to another seed
// stays valid by default: the source seed's last snapshots are uploaded meanwhile.
const DefaultMigrationGracePeriod = 24 * time.Hour

// EntryGeneration is inlined in a provider's `entryCredentials:`.
type EntryGeneration struct {
	// MigrationGracePeriod keeps the credential of an entry migrated away valid this long
	// (default 24h; 0s: revoked at once).
	MigrationGracePeriod *metav1.Duration `json:"migrationGracePeriod,omitempty"`
	// Rotation replaces an entry's credential when it is Period old (unset: only on request,
	// the BackupEntry's annotation) and keeps the previous one valid for GracePeriod.
	Rotation *Rotation `json:"rotation,omitempty"`
	// AllowBucketCredentialAtQuota publishes the bucket's credential in an entry's etcd-backup
	// when the store cannot hold another principal (its quota), said by the entry's condition,
	// an event and the isolation metric, and issues the entry's own once headroom returns.
	// Without it (the default), such an entry fails with ERR_INFRA_QUOTA_EXCEEDED.
	AllowBucketCredentialAtQuota bool `json:"allowBucketCredentialAtQuota,omitempty"`
}

// Validate checks the fields under path.
func (g *EntryGeneration) Validate(path *field.Path) field.ErrorList {
	if g == nil {
		return nil
	}
	errs := g.Rotation.Validate(path.Child("rotation"))
	if g.MigrationGracePeriod != nil && g.MigrationGracePeriod.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("migrationGracePeriod"), g.MigrationGracePeriod.Duration.String(), "must not be negative"))
	}
	return errs
}

// EntrySettings are the settings of per-entry credentials, a provider's `entryCredentials:`:
// each BackupEntry's etcd-backup secret holds a credential of its own that reaches only the
// entry's prefix.
type EntrySettings struct {
	EntryGeneration `json:",inline"`

	// Issuer names the provider's entry issuer (provider.Config.NewEntryIssuer takes it; the
	// provider validates it). The entry's etcd-backup secret records it, so that a credential is
	// always revoked by the issuer that issued it.
	Issuer string `json:"issuer"`
}

// MigrationGrace is how long an entry's credential stays valid after the entry migrated away.
func (s *EntrySettings) MigrationGrace() time.Duration {
	if s == nil || s.MigrationGracePeriod == nil {
		return DefaultMigrationGracePeriod
	}
	return s.MigrationGracePeriod.Duration
}

// RotationPeriod is the configured rotation period of entry credentials (0: only on request).
// Nil-safe.
func (s *EntrySettings) RotationPeriod() time.Duration {
	if s == nil {
		return 0
	}
	return s.Rotation.RotationPeriod()
}

// RotationGrace is how long an entry's rotated-out credential stays valid. Nil-safe.
func (s *EntrySettings) RotationGrace() time.Duration {
	if s == nil {
		return DefaultGracePeriod
	}
	return s.Rotation.Grace()
}

// EntryPolicy is implemented by the configs of providers that can issue per-entry credentials.
// A config of a provider without it never asks for them: its entries get the bucket's
// credential, and their EntryCredentials condition says so.
type EntryPolicy interface {
	// EntryCredentialSettings returns the settings of per-entry credentials, or nil when the
	// config does not ask for them (the default). It is safe on a nil config.
	EntryCredentialSettings() *EntrySettings
}
