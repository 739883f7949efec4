// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// streamChunkSize is the chunk of a resumable upload: the one buffer a streamed write holds
// (the SDK's Writer buffers one chunk). An object up to it is written in one request (the
// Writer streams it through a pipe, without a buffer). A variable so that a test reaches the
// resumable upload with small objects.
var streamChunkSize = 16 << 20

var (
	_ objectstore.StreamWriter      = (*store)(nil)
	_ objectstore.ConditionalWriter = (*store)(nil)
)

// PutObjectStream implements objectstore.StreamWriter with the SDK's Writer: one upload request
// up to streamChunkSize, else a resumable upload of chunks of it. The object is finalized only by
// the Writer's Close; a stream that is shorter or longer than size, or fails (see
// objectstore.ExactStream), fails the upload's body (CloseWithError) and cancels the Writer's
// context before that, so no object is written.
// GCS discards an unfinished resumable upload session by itself (after a week); it is no object
// and holds no storage.
func (s *store) PutObjectStream(ctx context.Context, bucket, key string, r io.Reader, size int64) error {
	return s.putObjectStream(ctx, bucket, key, r, size, nil)
}

// PutObjectStreamIf implements objectstore.ConditionalWriter with ifGenerationMatch on the upload
// (the one request, or the resumable upload's session, which GCS checks when it finalizes the
// object): 0 where the key must have no live generation, the listed generation
// (ObjectVersion.Version) where the write replaces it. GCS answers 412 conditionNotMet:
// ErrPreconditionFailed, and no object is written.
func (s *store) PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	return s.putObjectStream(ctx, bucket, key, r, size, &cond)
}

// putObjectStream is PutObjectStream, conditioned on cond where it is not nil.
func (s *store) putObjectStream(ctx context.Context, bucket, key string, r io.Reader, size int64, cond *objectstore.Precondition) error {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	if size < 0 {
		return objectstore.Invalidf("object %s: negative size %d", key, size)
	}
	dst, err := conditioned(s.client.Bucket(bucket).Object(key), cond)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := dst.NewWriter(ctx)
	w.ChunkSize = 0
	if size > int64(streamChunkSize) {
		w.ChunkSize = streamChunkSize
	}
	if _, err := io.Copy(w, objectstore.ExactStream(r, key, size)); err != nil {
		// The upload's body is a pipe: Close alone would end it normally, and a request under
		// way (one request up to streamChunkSize) would store what was sent. CloseWithError
		// fails the body first; the cancel before Close keeps a resumable upload unfinalized.
		_ = w.CloseWithError(err) //nolint:staticcheck // deprecated, but the only deterministic abort
		cancel()
		_ = w.Close()
		return fmt.Errorf("writing %q to bucket %q: %w", key, bucket, classifyBucket(err))
	}
	if err := w.Close(); err != nil {
		if cond != nil && preconditionFailed(err) {
			return fmt.Errorf("writing %q to bucket %q: generation condition not met: %w", key, bucket, objectstore.ErrPreconditionFailed)
		}
		return fmt.Errorf("writing %q to bucket %q: %w", key, bucket, classifyBucket(err))
	}
	return nil
}

// conditioned is h under cond's generation condition (none for nil): ifGenerationMatch=0 where
// the key must have no live generation, else the generation cond.Replaces names (a GCS listing's
// Version is its generation).
func conditioned(h *storage.ObjectHandle, cond *objectstore.Precondition) (*storage.ObjectHandle, error) {
	switch {
	case cond == nil:
		return h, nil
	case cond.Replaces == nil:
		return h.If(storage.Conditions{DoesNotExist: true}), nil
	}
	gen, err := strconv.ParseInt(cond.Replaces.Version, 10, 64)
	if err != nil || gen <= 0 || cond.Replaces.Noncurrent {
		return nil, objectstore.Invalidf("object %s: the precondition names generation %q, no listed live generation", cond.Replaces.Key, cond.Replaces.Version)
	}
	return h.If(storage.Conditions{GenerationMatch: gen}), nil
}

// preconditionFailed tells GCS's 412 conditionNotMet.
func preconditionFailed(err error) bool {
	var gerr *googleapi.Error
	return errors.As(err, &gerr) && gerr.Code == http.StatusPreconditionFailed
}
