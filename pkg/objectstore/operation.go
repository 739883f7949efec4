// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore

import "context"

// Store operations as the cloud request metrics label them (pkg/metrics.Transport reads the name
// from the request's context). Callers name a call with WithOperation where it is made; the
// deletion engine names its own listings and deletions.
const (
	OpEnsureBucket  = "ensure_bucket"
	OpDeleteBucket  = "delete_bucket"
	OpListObjects   = "list_objects"
	OpDeleteObjects = "delete_objects"
	OpDeferDeletion = "defer_deletion"
	OpProbe         = "probe"
	OpOpenObject    = "get_object"
	// OpPutObject labels the writes of a copy between two stores (StreamWriter.PutObjectStream).
	OpPutObject = "put_object"
	// OpCopyObject labels a copy inside one store (ServerSideCopier.CopyObject).
	OpCopyObject = "copy_object"
	// The credential issuer's calls (objectstore.CredentialIssuer), named where the BackupBucket
	// controller makes them.
	OpIssueCredential    = "issue_credential"
	OpRevokeCredentials  = "revoke_credentials"
	OpCredentialHeldIn   = "credential_held_in"
	OpCredentialLocation = "credential_location"
	OpCredentialHeadroom = "credential_headroom"
	// OpOther labels cloud requests made outside a named operation (token requests of an SDK's
	// own context, for example).
	OpOther = "other"
)

type operationKey struct{}

// WithOperation names the store operation (list_objects, delete_objects, probe, inventory, ...)
// that the cloud requests made with ctx belong to.
func WithOperation(ctx context.Context, operation string) context.Context {
	return context.WithValue(ctx, operationKey{}, operation)
}

// Operation is the store operation ctx was named for, or OpOther.
func Operation(ctx context.Context) string {
	if op, ok := ctx.Value(operationKey{}).(string); ok {
		return op
	}
	return OpOther
}

// namedUnlessNamed names ctx for operation unless a caller already named it (an inventory's
// listing keeps its own name).
func namedUnlessNamed(ctx context.Context, operation string) context.Context {
	if Operation(ctx) != OpOther {
		return ctx
	}
	return WithOperation(ctx, operation)
}
