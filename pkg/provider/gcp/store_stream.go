// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"fmt"
	"io"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// streamChunkSize is the chunk of a resumable upload: the one buffer a streamed write holds
// (the SDK's Writer buffers one chunk). An object up to it is written in one request (the
// Writer streams it through a pipe, without a buffer). A variable so that a test reaches the
// resumable upload with small objects.
var streamChunkSize = 16 << 20

var _ objectstore.StreamWriter = (*store)(nil)

// PutObjectStream implements objectstore.StreamWriter with the SDK's Writer: one upload request
// up to streamChunkSize, else a resumable upload of chunks of it. The object is finalized only by
// the Writer's Close; a stream that is shorter or longer than size, or fails (see
// objectstore.ExactStream), cancels the Writer's context before that, so no object is written.
// GCS discards an unfinished resumable upload session by itself (after a week); it is no object
// and holds no storage.
func (s *store) PutObjectStream(ctx context.Context, bucket, key string, r io.Reader, size int64) error {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	if size < 0 {
		return objectstore.Invalidf("object %s: negative size %d", key, size)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := s.client.Bucket(bucket).Object(key).NewWriter(ctx)
	w.ChunkSize = 0
	if size > int64(streamChunkSize) {
		w.ChunkSize = streamChunkSize
	}
	if _, err := io.Copy(w, objectstore.ExactStream(r, key, size)); err != nil {
		cancel() // before Close: the object is never finalized
		_ = w.Close()
		return fmt.Errorf("writing %q to bucket %q: %w", key, bucket, classifyBucket(err))
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("writing %q to bucket %q: %w", key, bucket, classifyBucket(err))
	}
	return nil
}
