// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package credentials is the providerConfig part of generated credentials that every provider
// shares: who issues them (Settings.Issuer), when they are rotated (Rotation), and whether shoots
// may keep the operator's credentials when the store cannot issue any (AllowPassThrough).
package credentials

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Generation is inlined in a provider's `generatedCredentials:`.
type Generation struct {
	// Rotation says when to rotate the credential and how long the previous one stays valid.
	Rotation *Rotation `json:"rotation,omitempty"`
	// AllowPassThrough publishes nothing and leaves shoots on the operator's credentials when the
	// store cannot issue restricted ones; the bucket's status says so. Without it, that is an
	// error.
	AllowPassThrough bool `json:"allowPassThrough,omitempty"`
}

// Validate checks the settings at path (the `generatedCredentials` field).
func (g *Generation) Validate(path *field.Path) field.ErrorList {
	if g == nil {
		return nil
	}
	return g.Rotation.Validate(path.Child("rotation"))
}

// Settings is what the BackupBucket controller reads of a bucket's generated credentials: the
// provider's issuer named by the config (never guessed), and the generation settings with the
// provider's defaults applied.
type Settings struct {
	Generation

	// Issuer names the provider's issuer (provider.Provider.NewIssuer takes it), for example
	// "IAM" or "MinIO" on AWS. The generated secret records it, so that a credential is always
	// revoked by the issuer that issued it.
	Issuer string
}

// Policy is implemented by a provider's decoded BackupBucket config.
type Policy interface {
	// GenerationSettings returns the settings of the bucket's generated credentials, or nil if
	// the config does not ask for any. It is safe on a nil config (the defaults).
	GenerationSettings() *Settings
}

// RotationPeriod is the configured rotation period (0: only on request). Nil-safe.
func (s *Settings) RotationPeriod() time.Duration {
	if s == nil {
		return 0
	}
	return s.Rotation.RotationPeriod()
}

// Grace is how long a rotated-out or retired credential stays valid. Nil-safe.
func (s *Settings) Grace() time.Duration {
	if s == nil {
		return DefaultGracePeriod
	}
	return s.Rotation.Grace()
}
