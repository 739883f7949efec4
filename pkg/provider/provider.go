// Package provider defines what one cloud plugs into the provider-neutral backup controllers.
package provider

import (
	"context"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Provider is one cloud's implementation. It holds no per-request state: the controllers call it
// from several workers at once.
type Provider interface {
	// Type is the extension type (spec.type) this provider serves, for example "aws".
	Type() string

	// DecodeBucketConfig strictly decodes and validates a BackupBucket's providerConfig (nil or
	// empty: the defaults) before any cloud call. Errors wrap objectstore.ErrInvalidConfig and
	// name the offending field path (for example "providerConfig.immutability.retentionPeriod").
	DecodeBucketConfig(raw []byte) (any, error)

	// ValidateBucketName checks the store's naming rules for a bucket (the BackupBucket's name)
	// without any call, so that the admission webhook and the controllers refuse a name the store
	// would refuse. Errors wrap objectstore.ErrInvalidConfig and name the rule broken.
	ValidateBucketName(name string) error

	// NewStore builds a store from the data of a credentials secret. It is called for every
	// request and must not cache clients across requests. Missing or malformed keys return
	// objectstore.ErrInvalidConfig naming the key, never its value.
	NewStore(ctx context.Context, creds Credentials) (objectstore.Store, error)

	// EtcdBackupSecretData returns the data of the shoot's etcd-backup secret: exactly the keys
	// etcd-backup-restore reads, from the entry secret's data (which gardener's generic actuator
	// has already given the bucketName key).
	EtcdBackupSecretData(entry *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error)
}

// Credentials is a credentials secret as the provider sees it.
type Credentials struct {
	// Data is the secret's data.
	Data map[string][]byte
	// WorkloadIdentity is true for a workload identity secret (data keys "config" and "token").
	WorkloadIdentity bool
	// Region is the bucket's region (spec.region), for clients that need one.
	Region string
	// BucketConfig is the BackupBucket's providerConfig as DecodeBucketConfig returned it, or nil
	// (for entries, and buckets without one).
	BucketConfig any
	// Retiring asks for a store that revokes the generated credentials of a bucket whose
	// providerConfig no longer asks for them: a provider that can still revoke them with these
	// credentials returns an objectstore.CredentialIssuer (used only to revoke).
	Retiring bool
}
