package metrics

import (
	"context"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Issuer names every call of i with its operation (objectstore.WithOperation), so that the
// cloud requests a provider's Transport counts carry it; a nil issuer stays nil. (Store calls
// are named where they are made: the deletion engine and the controllers.)
func Issuer(i objectstore.CredentialIssuer) objectstore.CredentialIssuer {
	if i == nil {
		return nil
	}
	return namedIssuer{i}
}

type namedIssuer struct{ issuer objectstore.CredentialIssuer }

func (n namedIssuer) IssueCredential(ctx context.Context, bucket string, inUse []string) (objectstore.Credential, error) {
	return n.issuer.IssueCredential(objectstore.WithOperation(ctx, "issue_credential"), bucket, inUse)
}

func (n namedIssuer) RevokeCredentials(ctx context.Context, bucket string, keep []string) error {
	return n.issuer.RevokeCredentials(objectstore.WithOperation(ctx, "revoke_credentials"), bucket, keep)
}

// HeldIn forwards to the issuer.
func (n namedIssuer) HeldIn(ctx context.Context, bucket string, data map[string][]byte) ([]string, error) {
	return n.issuer.HeldIn(objectstore.WithOperation(ctx, "credential_held_in"), bucket, data)
}

// CredentialReach forwards to the issuer (no request).
func (n namedIssuer) CredentialReach(bucket string) string { return n.issuer.CredentialReach(bucket) }

func (n namedIssuer) Location(ctx context.Context) (string, error) {
	return n.issuer.Location(objectstore.WithOperation(ctx, "credential_location"))
}
