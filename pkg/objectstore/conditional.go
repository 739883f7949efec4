// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore

import (
	"context"
	"errors"
	"io"
)

// ErrPreconditionFailed means a conditional write found the key's current version other than its
// Precondition said (written, replaced or deleted by someone else since it was listed), and wrote
// nothing. A conflict, never to be retried blindly: the caller lists again and decides.
var ErrPreconditionFailed = errors.New("the object changed since it was listed")

// Precondition is what a conditional write requires of its key's current version at the moment
// the write takes effect.
type Precondition struct {
	// Replaces is the current version the write replaces, as a listing reported it: the store
	// compares what it can of it (S3 and Azure its ETag, GCS its generation, the Version). Nil:
	// the key must have no current version (missing, or its newest version a delete marker).
	Replaces *ObjectVersion
}

// ConditionalWriter is a StreamWriter that can guard its write: a copy between two stores uses
// it so that an object written to the destination between the copy's listing and its write is
// never overwritten. Stores that have it: aws (S3's If-None-Match: * and If-Match on PutObject and
// CompleteMultipartUpload) and memstore.
type ConditionalWriter interface {
	// PutObjectStreamIf is StreamWriter.PutObjectStream, done only if cond holds when the object
	// is stored; otherwise nothing is written and the error wraps ErrPreconditionFailed.
	PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond Precondition) error
}

// ConditionalCopier is a ServerSideCopier that can guard its write as ConditionalWriter does.
// Stores that have it: aws (If-None-Match and If-Match on CopyObject and
// CompleteMultipartUpload; a store that ignores them there, as MinIO does on CopyObject, is
// unguarded).
type ConditionalCopier interface {
	// CopyObjectIf is ServerSideCopier.CopyObject, done only if cond holds for dstKey when the
	// copy is stored; otherwise nothing is written and the error wraps ErrPreconditionFailed.
	CopyObjectIf(ctx context.Context, srcBucket string, src ObjectVersion, dstBucket, dstKey string, cond Precondition) error
}
