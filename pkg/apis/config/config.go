// Package config is what the provider-neutral core and the admission webhook know of every
// provider's API, without any cloud SDK: a decoded BackupBucket providerConfig (Bucket) and the
// checks that need no call (API).
package config

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
)

// Bucket is a provider's decoded, validated BackupBucket providerConfig: a pointer to the
// provider's own type, which only that provider's management plane and issuers read. The core
// reads it only through these methods, on a config its provider decoded (provider.Config), never
// a nil one: empty input decodes to the defaults.
type Bucket interface {
	credentials.Policy
	freshness.Policy
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
	DecodeBucketConfig(raw []byte) (Bucket, error)

	// ValidateBucketName checks the store's naming rules for a bucket (the BackupBucket's name)
	// without any call, so that the admission webhook and the controllers refuse a name the store
	// would refuse. Errors wrap objectstore.ErrInvalidConfig and name the rule broken.
	ValidateBucketName(name string) error
}

// Decoded returns what a provider's typed decoding returned as a Bucket: on an error, a nil
// Bucket, never a typed nil pointer in it (which would not compare equal to nil).
func Decoded[T Bucket](cfg T, err error) (Bucket, error) {
	if err != nil {
		return nil, err
	}
	return cfg, nil
}
