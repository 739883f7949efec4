// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package config is what the provider-neutral core and the admission webhook know of every
// provider's API, without any cloud SDK: a decoded BackupBucket providerConfig (ProviderConfig)
// and the checks that need no call (API, which NewAPI makes of a provider's typed functions).
package config

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
)

// ProviderConfig is a provider's decoded, validated BackupBucket providerConfig: a pointer to the
// provider's own type, which only that provider's management plane and issuers read. The core
// reads it only through these methods, on a config its provider decoded (provider.Config), never
// a nil one: empty input decodes to the defaults.
type ProviderConfig interface {
	credentials.Policy
	freshness.Policy
	copystore.Policy
	// HandsBack is true while the bucket is being handed back to the provider extension this
	// project took it over from (providerConfig handBack): the store is left in that
	// extension's form, and this project's finalizer leaves the bucket's BackupEntries, which
	// that extension will delete without it.
	HandsBack() bool
}

// API is the SDK-free half of a provider: what the webhook checks and the core decodes before any
// cloud call. Implementations hold no state.
type API interface {
	// Type is the extension type (spec.type) the provider serves, for example "aws".
	Type() string

	// DecodeBucketConfig strictly decodes and validates a BackupBucket's providerConfig (nil or
	// empty: the defaults) before any cloud call: the admission webhook's check. (The controllers
	// decode through provider.Provider.Decode, typed.) Errors wrap objectstore.ErrInvalidConfig and
	// name the offending field path (for example "providerConfig.immutability.retentionPeriod").
	DecodeBucketConfig(raw []byte) (ProviderConfig, error)

	// ValidateBucketName checks the store's naming rules for a bucket (the BackupBucket's name)
	// without any call, so that the admission webhook and the controllers refuse a name the store
	// would refuse. Errors wrap objectstore.ErrInvalidConfig and name the rule broken.
	ValidateBucketName(name string) error

	// IncumbentFields are the top-level fields of the BackupBucketConfig that the provider
	// extension of the same type (gardener-extension-provider-<type>, the incumbent) serves
	// itself: they belong in the Seed's providerConfig, where its admission checks them and its
	// webhooks and controllers read them, never in the seed configuration (decode.WithSeedConfig).
	IncumbentFields() []string
}

// NewAPI is a provider's API of its extension type, its strict typed decoding of a
// providerConfig, its bucket naming rules and the incumbent's fields: the one implementation of
// API. Its type parameter is the compile-time check that the provider's config type C is a
// ProviderConfig.
func NewAPI[C ProviderConfig](typ string, decode func(raw []byte) (C, error), validateBucketName func(name string) error, incumbentFields ...string) API {
	return api[C]{typ: typ, decode: decode, validateBucketName: validateBucketName, incumbentFields: incumbentFields}
}

type api[C ProviderConfig] struct {
	typ                string
	decode             func([]byte) (C, error)
	validateBucketName func(string) error
	incumbentFields    []string
}

func (a api[C]) IncumbentFields() []string { return a.incumbentFields }

func (a api[C]) Type() string { return a.typ }

// DecodeBucketConfig returns a nil ProviderConfig on an error, never a typed nil pointer in it
// (which would not compare equal to nil).
func (a api[C]) DecodeBucketConfig(raw []byte) (ProviderConfig, error) {
	cfg, err := a.decode(raw)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

func (a api[C]) ValidateBucketName(name string) error { return a.validateBucketName(name) }
