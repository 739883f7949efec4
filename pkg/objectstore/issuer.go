package objectstore

import "context"

// Credential is a credential scoped to one bucket that a store issued.
type Credential struct {
	// ID names the credential among the bucket's credentials (for example "key2" or an access
	// key ID). It is not secret: it is recorded on the generated secret to know what is in use.
	ID string
	// Data is the generated secret's data: what etcd-backup-restore reads to reach the bucket.
	Data map[string][]byte
}

// CredentialIssuer issues credentials scoped to one bucket; a provider builds one by name
// (provider.Provider.NewIssuer). The BackupBucket controller publishes them as the bucket's
// generated secret and rotates them with an overlap: a new credential is published before the
// previous one is revoked, and always by the issuer that issued it.
type CredentialIssuer interface {
	// IssueCredential returns a new credential for bucket. The credentials named in inUse stay
	// valid; a store that cannot issue one more without revoking one of them returns
	// ErrInvalidConfig. A credential issued earlier but never recorded (by a pass that failed
	// before publishing it) is invalidated, or handed out again if nobody else can hold it.
	IssueCredential(ctx context.Context, bucket string, inUse []string) (Credential, error)

	// RevokeCredentials invalidates every credential of bucket not named in keep. A bucket that
	// is gone has nothing left to revoke: that is success.
	RevokeCredentials(ctx context.Context, bucket string, keep []string) error
}
