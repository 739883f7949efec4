// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

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

var _ objectstore.ConditionalWriter = (*store)(nil)

// PutObjectStreamIf implements objectstore.ConditionalWriter: PutObjectStream, the written
// temporary file put into place only where cond holds (putInPlace); otherwise it is removed and
// the error wraps ErrPreconditionFailed.
func (s *store) PutObjectStreamIf(_ context.Context, bucket, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	if size < 0 {
		return objectstore.Invalidf("object %s: negative size %d", key, size)
	}
	return s.writeObjectIf(bucket, key, func(w io.Writer) error {
		_, err := io.Copy(w, objectstore.ExactStream(r, key, size))
		return err
	}, &cond)
}

// putInPlace makes the written file tmp the object key, where cond holds (nil: always, a rename).
// A key that must be missing is created exclusively: a hard link to tmp, which the filesystem
// refuses when key exists (EEXIST), atomically; tmp is then removed. A key that must be the
// listed version is compared with it (a regular file of the listed size and modification time,
// in the filesystem's full resolution) before the rename: a write by another process between
// that comparison and the rename is replaced, since a filesystem has no rename conditioned on
// the replaced file.
func putInPlace(r *os.Root, tmp, key string, cond *objectstore.Precondition) error {
	switch {
	case cond == nil:
		return r.Rename(tmp, key)
	case cond.Replaces == nil:
		if err := r.Link(tmp, key); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("writing %s: it exists: %w", key, objectstore.ErrPreconditionFailed)
			}
			return err
		}
		return r.Remove(tmp)
	}
	fi, err := r.Lstat(key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("writing %s: it is missing: %w", key, objectstore.ErrPreconditionFailed)
	case err != nil:
		return err
	case !fi.Mode().IsRegular() || fi.Size() != cond.Replaces.Size || !fi.ModTime().Equal(cond.Replaces.Modified):
		return fmt.Errorf("writing %s: it was written again since it was listed (%d bytes at %s, listed %d at %s): %w",
			key, fi.Size(), fi.ModTime(), cond.Replaces.Size, cond.Replaces.Modified, objectstore.ErrPreconditionFailed)
	}
	return r.Rename(tmp, key)
}
