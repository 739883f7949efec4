// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore

import (
	"context"
	"fmt"
)

// Credential is a credential scoped to one bucket that a store issued.
type Credential struct {
	// ID names the credential among the bucket's credentials (for example "key2" or an access
	// key ID). It is not secret: it is recorded on the generated secret to know what is in use.
	ID string
	// Data is the generated secret's data: what etcd-backup-restore reads to reach the bucket.
	Data map[string][]byte
}

// CredentialIssuer issues credentials scoped to one bucket; a provider builds one by name
// (provider.Cloud.NewIssuer). The BackupBucket controller publishes them as the bucket's
// generated secret and rotates them with an overlap: a new credential is published before the
// previous one is revoked, and always by the issuer that issued it.
type CredentialIssuer interface {
	// IssueCredential returns a new credential for bucket. The credentials named in inUse stay
	// valid; a store that cannot issue one more without revoking one of them returns
	// ErrInvalidConfig. A credential issued earlier but never recorded (by a pass that failed
	// before publishing it) is invalidated, or handed out again if nobody else can hold it.
	IssueCredential(ctx context.Context, bucket string, inUse []string) (Credential, error)

	// RevokeCredentials invalidates every credential of bucket not named in keep, in the place
	// Location names. A bucket that is gone, or a credential not found there, has nothing left to
	// revoke: that is success. The caller makes sure first that the credentials were issued in
	// that place (CheckLocation): "not found" elsewhere proves nothing.
	RevokeCredentials(ctx context.Context, bucket string, keep []string) error

	// Location names, without any secret, the place where the credentials this issuer issues
	// live and where RevokeCredentials looks for them, as the operator's credentials reach it:
	// the account, project, subscription, server or identity-service user (for example
	// "aws-account:123456789012" or "gcp-project:my-project"). Two issuers with the same location
	// see the same credentials. It is recorded with every credential issued, and compared before
	// each revocation.
	Location(ctx context.Context) (string, error)

	// HeldIn returns the IDs of bucket's credentials that the secret data holds (none: it holds
	// none of them). It matters where a copy of the operator's credentials can hold one of the
	// credentials the issuer rotates (Azure: an account key secret holds one of the account's two
	// keys): the controller never revokes or regenerates them while that data is published, and
	// never issues a credential that would invalidate them. Issuers whose credentials no operator
	// secret can hold return none.
	HeldIn(ctx context.Context, bucket string, data map[string][]byte) ([]string, error)

	// CredentialReach says, for the GeneratedCredentials condition, what a credential this issuer
	// issues for bucket can reach, claiming no more than the store enforces on every request.
	CredentialReach(bucket string) string
}

// StoreKeysIssuer is a CredentialIssuer whose credentials are keys of the bucket's store itself
// (Azure: the storage account's key1 and key2), not identities of their own beside it. They end
// with the store, and the provider extension a store is handed back to publishes and rotates
// those same keys as its own: a hand-back leaves them to it, revoking and refusing nothing.
// Every other issuer's credentials are unknown to that extension and outlive the hand-back
// unless revoked (the BackupBucket actuator's handBack).
type StoreKeysIssuer interface {
	CredentialIssuer
	// IssuesStoreKeys marks the issuer; it does nothing.
	IssuesStoreKeys()
}

// CredentialElsewhereError says that credentials were issued in another place than the one the
// issuer reaches now (the operator's credentials moved to another account, project or user):
// they cannot be revoked by it, and are not revoked. It is an invalid configuration: the
// operator revokes them by hand.
type CredentialElsewhereError struct {
	// IDs names the credentials (IDs, never values).
	IDs string
	// Recorded is where they were issued, Current where the issuer reaches now.
	Recorded, Current string
}

func (e *CredentialElsewhereError) Error() string {
	return fmt.Sprintf("credentials %q were issued in %s, but the operator's credentials now reach %s: they cannot be revoked from here and stay valid until revoked by hand", e.IDs, e.Recorded, e.Current)
}

// Is makes the error an ErrInvalidConfig (ERR_CONFIGURATION_PROBLEM): the operator has to act.
func (e *CredentialElsewhereError) Is(target error) bool { return target == ErrInvalidConfig }

// CheckLocation returns a *CredentialElsewhereError unless the credentials ids recorded as issued
// in recorded are in the place issuer reaches now. An empty recorded location is no place: it
// proves nothing, and is refused like another place.
func CheckLocation(ctx context.Context, issuer CredentialIssuer, ids, recorded string) error {
	current, err := issuer.Location(WithOperation(ctx, OpCredentialLocation))
	if err != nil {
		return fmt.Errorf("finding where the issuer's credentials live: %w", err)
	}
	if current != recorded {
		return &CredentialElsewhereError{IDs: ids, Recorded: recorded, Current: current}
	}
	return nil
}
