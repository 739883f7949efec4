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
}

// Validate checks the fields under path.
func (g *EntryGeneration) Validate(path *field.Path) field.ErrorList {
	if g == nil || g.MigrationGracePeriod == nil || g.MigrationGracePeriod.Duration >= 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(path.Child("migrationGracePeriod"), g.MigrationGracePeriod.Duration.String(), "must not be negative")}
}

// EntrySettings are the settings of per-entry credentials: each BackupEntry's etcd-backup
// secret holds a credential of its own that reaches only the entry's prefix.
type EntrySettings struct {
	EntryGeneration

	// Issuer names the provider's entry issuer (provider.Config.NewEntryIssuer takes it). The
	// entry's etcd-backup secret records it, so that a credential is always revoked by the
	// issuer that issued it.
	Issuer string
}

// MigrationGrace is how long an entry's credential stays valid after the entry migrated away.
func (s *EntrySettings) MigrationGrace() time.Duration {
	if s == nil || s.MigrationGracePeriod == nil {
		return DefaultMigrationGracePeriod
	}
	return s.MigrationGracePeriod.Duration
}

// EntryPolicy is implemented by the configs of providers that can issue per-entry credentials.
// A config of a provider without it never asks for them: its entries get the bucket's
// credential, and their EntryCredentials condition says so.
type EntryPolicy interface {
	// EntryCredentialSettings returns the settings of per-entry credentials, or nil when the
	// config does not ask for them (the default). It is safe on a nil config.
	EntryCredentialSettings() *EntrySettings
}
