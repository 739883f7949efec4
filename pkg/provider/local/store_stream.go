// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"context"
	"io"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

var _ objectstore.StreamWriter = (*store)(nil)

// PutObjectStream implements objectstore.StreamWriter: the stream is copied into a temporary
// file beside key (io.Copy's bounded buffer) that is renamed into place only when exactly size
// bytes were read; any other outcome removes it.
func (s *store) PutObjectStream(_ context.Context, bucket, key string, r io.Reader, size int64) error {
	if size < 0 {
		return objectstore.Invalidf("object %s: negative size %d", key, size)
	}
	return s.writeObject(bucket, key, func(w io.Writer) error {
		_, err := io.Copy(w, objectstore.ExactStream(r, key, size))
		return err
	})
}
