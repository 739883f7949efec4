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

// Guard is a kind of Precondition: what a conditional write requires of its key.
type Guard string

const (
	// GuardAbsent requires the key to have no current version (Precondition.Replaces nil).
	GuardAbsent Guard = "Absent"
	// GuardVersion requires the key's current version to be Precondition.Replaces.
	GuardVersion Guard = "Version"
)

// Guard is p's kind.
func (p Precondition) Guard() Guard {
	if p.Replaces == nil {
		return GuardAbsent
	}
	return GuardVersion
}

// PartialWriteGuard is a ConditionalWriter that enforces only some kinds of Precondition (Swift
// has no If-Match on a PUT). WriteGuards says whether it enforces g; a conditional write of a kind
// it does not enforce writes nothing and returns an error wrapping ErrUnsupported: the caller
// writes unguarded (and says so) or not at all. A ConditionalWriter without it enforces every
// kind.
type PartialWriteGuard interface {
	WriteGuards(g Guard) bool
}

// PartialCopyGuard is to a ConditionalCopier what PartialWriteGuard is to a ConditionalWriter
// (Swift's server-side copy evaluates conditional headers against the source, so it guards no
// destination).
type PartialCopyGuard interface {
	CopyGuards(g Guard) bool
}

// WriteGuarded reports whether w enforces cond's kind.
func WriteGuarded(w ConditionalWriter, cond Precondition) bool {
	p, ok := w.(PartialWriteGuard)
	return !ok || p.WriteGuards(cond.Guard())
}

// CopyGuarded reports whether c enforces cond's kind.
func CopyGuarded(c ConditionalCopier, cond Precondition) bool {
	p, ok := c.(PartialCopyGuard)
	return !ok || p.CopyGuards(cond.Guard())
}

// ConditionalWriter is a StreamWriter that can guard its write: a copy between two stores uses
// it so that an object written to the destination between the copy's listing and its write is
// never overwritten. Every provider's store has it (each in its store_stream.go), and memstore;
// openstack guards GuardAbsent only (see PartialWriteGuard).
type ConditionalWriter interface {
	// PutObjectStreamIf is StreamWriter.PutObjectStream, done only if cond holds when the object
	// is stored; otherwise nothing is written and the error wraps ErrPreconditionFailed.
	PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond Precondition) error
}

// ConditionalCopier is a ServerSideCopier that can guard its write as ConditionalWriter does.
// Every provider's data plane has it (each in its store_copy.go); aws's is unguarded for an
// empty object on an endpoint that ignores the conditions on CopyObject (MinIO), openstack's
// guards nothing (see PartialCopyGuard).
type ConditionalCopier interface {
	// CopyObjectIf is ServerSideCopier.CopyObject, done only if cond holds for dstKey when the
	// copy is stored; otherwise nothing is written and the error wraps ErrPreconditionFailed.
	CopyObjectIf(ctx context.Context, srcBucket string, src ObjectVersion, dstBucket, dstKey string, cond Precondition) error
}
