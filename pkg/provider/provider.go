// Package provider defines what one cloud plugs into the provider-neutral backup controllers.
package provider

import (
	"context"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Provider is one cloud's implementation. It holds no per-request state: the controllers call it
// from several workers at once.
type Provider interface {
	// API is the provider's SDK-free half (type, providerConfig decoding, bucket names); the
	// admission webhook uses it alone.
	config.API

	// NewStore builds a store from the data of a credentials secret and the bucket's decoded
	// providerConfig (nil: the defaults; entries pass the copy gardenlet gives them). It is called
	// for every request and must not cache clients across requests. Missing or malformed keys
	// return objectstore.ErrInvalidConfig naming the key, never its value.
	NewStore(ctx context.Context, creds Credentials, cfg config.Bucket) (objectstore.Store, error)

	// NewIssuer builds the issuer named issuer (a name config.Bucket's GeneratedCredentials
	// returned, or one a generated secret recorded) from the same credentials, to issue, rotate
	// or revoke the bucket's generated credentials. cfg may ask for no generated credentials: the
	// issuer is then used only to revoke. It returns a nil issuer without an error where these
	// credentials issue none (shoots use the operator's credentials, for example an Azure account
	// key secret), and objectstore.ErrInvalidConfig for a name the provider does not know. The
	// empty name stands for generated secrets recorded before issuers were named: the provider's
	// issuer for these credentials.
	NewIssuer(ctx context.Context, creds Credentials, cfg config.Bucket, issuer string) (objectstore.CredentialIssuer, error)

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
}
