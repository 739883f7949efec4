package metrics

import (
	"context"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Store names every call of s with its operation (WithOperation), so that the cloud requests a
// provider's Transport counts carry it.
func Store(s objectstore.Store) objectstore.Store { return namedStore{s} }

// Issuer does for an issuer what Store does for a store; a nil issuer stays nil.
func Issuer(i objectstore.CredentialIssuer) objectstore.CredentialIssuer {
	if i == nil {
		return nil
	}
	return namedIssuer{i}
}

type namedStore struct{ s objectstore.Store }

func (n namedStore) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	return n.s.EnsureBucket(WithOperation(ctx, "ensure_bucket"), b)
}

func (n namedStore) DeleteBucket(ctx context.Context, name string) error {
	return n.s.DeleteBucket(WithOperation(ctx, "delete_bucket"), name)
}

func (n namedStore) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	if Operation(ctx) == OperationOther { // a probe or an inventory keeps its own name
		ctx = WithOperation(ctx, "list_objects")
	}
	return n.s.ListObjects(ctx, bucket, prefix, fn)
}

func (n namedStore) DeleteObjects(ctx context.Context, bucket string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	return n.s.DeleteObjects(WithOperation(ctx, "delete_objects"), bucket, objects)
}

func (n namedStore) MaxDeleteBatch() int { return n.s.MaxDeleteBatch() }

func (n namedStore) DeferDeletion(ctx context.Context, bucket, prefix string) (objectstore.Deferral, error) {
	return n.s.DeferDeletion(WithOperation(ctx, "defer_deletion"), bucket, prefix)
}

func (n namedStore) Probe(ctx context.Context, bucket string) error {
	return n.s.Probe(WithOperation(ctx, "probe"), bucket)
}

func (n namedStore) PutObject(ctx context.Context, bucket, key string, data []byte) error {
	return n.s.PutObject(WithOperation(ctx, "put_object"), bucket, key, data)
}

func (n namedStore) GetObject(ctx context.Context, bucket, key string) ([]byte, error) {
	return n.s.GetObject(WithOperation(ctx, "get_object"), bucket, key)
}

type namedIssuer struct{ issuer objectstore.CredentialIssuer }

func (n namedIssuer) IssueCredential(ctx context.Context, bucket string, inUse []string) (objectstore.Credential, error) {
	return n.issuer.IssueCredential(WithOperation(ctx, "issue_credential"), bucket, inUse)
}

func (n namedIssuer) RevokeCredentials(ctx context.Context, bucket string, keep []string) error {
	return n.issuer.RevokeCredentials(WithOperation(ctx, "revoke_credentials"), bucket, keep)
}

// HeldIn forwards to the issuer.
func (n namedIssuer) HeldIn(ctx context.Context, bucket string, data map[string][]byte) ([]string, error) {
	return n.issuer.HeldIn(WithOperation(ctx, "credential_held_in"), bucket, data)
}

// CredentialReach forwards to the issuer (no request).
func (n namedIssuer) CredentialReach(bucket string) string { return n.issuer.CredentialReach(bucket) }

func (n namedIssuer) Location(ctx context.Context) (string, error) {
	return n.issuer.Location(WithOperation(ctx, "credential_location"))
}
