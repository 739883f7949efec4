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
	"math/rand/v2"
	"os"
	"path"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// maxDeleteBatch bounds one DeleteObjects call: each object is one unlink, so the batch only
// bounds the work between two checks of the engine's limiter.
const maxDeleteBatch = 1000

// ListObjects implements objectstore.DataPlane. It walks the bucket's directories in lexical
// order (a stable order), descending only into directories that can hold keys under prefix, and
// calls fn with pages of at most pageSize files. Symbolic links are listed as objects (deleting
// one removes the link) and never followed. A directory is not an object; the marker is never
// listed.
func (s *store) ListObjects(ctx context.Context, bucket, prefix string, fn func(page []objectstore.ObjectVersion) error) error {
	r, err := s.openBucket(bucket)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	start := "."
	if i := strings.LastIndex(prefix, "/"); i > 0 {
		start = prefix[:i]
		if checkKey(start) != nil {
			return objectstore.Invalidf("listing prefix %q is not a clean relative path", prefix)
		}
		if gone, err := parentsAreDirs(r, start+"/x"); err != nil || gone {
			return err // nothing can be listed under a missing directory, nor through a link
		}
	}
	page := make([]objectstore.ObjectVersion, 0, s.pageSize)
	err = fs.WalkDir(r.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted while listed
			}
			return classify(err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != start && !strings.HasPrefix(p+"/", prefix) && !strings.HasPrefix(prefix, p+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if p == MarkerFile || !strings.HasPrefix(p, prefix) {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return classify(err)
		}
		size := info.Size()
		if !info.Mode().IsRegular() {
			size = 0
		}
		page = append(page, objectstore.ObjectVersion{Key: p, Size: size, Modified: info.ModTime()})
		if len(page) == s.pageSize {
			if err := fn(page); err != nil {
				return stopWalk{err}
			}
			page = make([]objectstore.ObjectVersion, 0, s.pageSize)
		}
		return nil
	})
	var stop stopWalk
	if errors.As(err, &stop) {
		return stop.err
	}
	if err != nil {
		return err
	}
	if len(page) > 0 {
		return fn(page)
	}
	return nil
}

// stopWalk carries fn's error out of the walk unchanged.
type stopWalk struct{ err error }

func (e stopWalk) Error() string { return e.err.Error() }

// DeleteObjects implements objectstore.DataPlane: one unlink per object, then every directory
// the deletion emptied on the key's path is removed, up to the key's first component (the
// entry's directory), never the bucket's directory. A missing object is deleted; a key through a
// symbolic link or naming a directory is refused, per object.
func (s *store) DeleteObjects(ctx context.Context, bucket string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	if len(objects) > maxDeleteBatch {
		return nil, objectstore.Invalidf("%d objects in one DeleteObjects call; at most %d", len(objects), maxDeleteBatch)
	}
	r, err := s.openBucket(bucket)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	var failed []objectstore.ObjectError
	for _, o := range objects {
		if err := ctx.Err(); err != nil {
			return failed, err
		}
		if err := deleteFile(r, o.Key); err != nil {
			failed = append(failed, objectstore.ObjectError{Object: o, Err: err})
		}
	}
	return failed, nil
}

// deleteFile removes one key's file and the directories that it leaves empty.
func deleteFile(r *os.Root, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	gone, err := parentsAreDirs(r, key)
	if err != nil || gone {
		return err
	}
	fi, err := r.Lstat(key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return classify(err)
	case fi.IsDir():
		return objectstore.Invalidf("object key %q names a directory, not a file", key)
	}
	if err := r.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return classify(err)
	}
	for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
		if r.Remove(dir) != nil {
			break // not empty (or already gone): its other files keep it
		}
	}
	return nil //nolint:nilerr // a parent directory that stays is no error
}

// MaxDeleteBatch implements objectstore.DataPlane.
func (s *store) MaxDeleteBatch() int { return maxDeleteBatch }

// Probe implements objectstore.DataPlane: the bucket is opened (a directory of ours) and one
// entry of it read. It never writes.
func (s *store) Probe(_ context.Context, bucket string) error {
	r, err := s.openBucket(bucket)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	f, err := r.Open(".")
	if err != nil {
		return classify(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.ReadDir(1); err != nil && !errors.Is(err, io.EOF) {
		return classify(err)
	}
	return nil
}

// OpenObject implements objectstore.DataPlane: a regular file, read as a stream. A symbolic link
// is refused, never followed. Files have no versions: any version but "" is not found.
func (s *store) OpenObject(_ context.Context, bucket, key, version string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if version != "" {
		return nil, fmt.Errorf("%w: %q version %q: the local provider keeps no versions", objectstore.ErrNotFound, key, version)
	}
	r, err := s.openBucket(bucket)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	if gone, err := parentsAreDirs(r, key); err != nil || gone {
		if err == nil {
			err = fmt.Errorf("%w: %q", objectstore.ErrNotFound, key)
		}
		return nil, err
	}
	fi, err := r.Lstat(key)
	switch {
	case err != nil:
		return nil, classify(err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%w: %q is a symbolic link: the local provider never follows one", objectstore.ErrForbidden, key)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%w: %q is not a file", objectstore.ErrNotFound, key)
	}
	f, err := r.Open(key)
	if err != nil {
		return nil, classify(err)
	}
	return f, nil
}

// PutObject implements objectstore.Writer: the key's directories are made as needed and the
// file is written whole (a temporary file renamed into place).
func (s *store) PutObject(_ context.Context, bucket, key string, data []byte) error {
	return s.writeObject(bucket, key, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeObject makes key's directories as needed and writes the file with fill into a temporary
// file beside it, renamed into place: a reader sees the old file or the whole new one, and a
// failed write leaves neither a file nor the temporary one. A concurrent deletion that removes
// an emptied parent before fill ran is retried; after, the write fails (fill's source is spent).
func (s *store) writeObject(bucket, key string, fill func(io.Writer) error) error {
	return s.writeObjectIf(bucket, key, fill, nil)
}

// writeObjectIf is writeObject, the temporary file put into place only where cond holds (see
// putInPlace); nil: always.
func (s *store) writeObjectIf(bucket, key string, fill func(io.Writer) error, cond *objectstore.Precondition) error {
	if err := checkKey(key); err != nil {
		return err
	}
	r, err := s.openBucket(bucket)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	var last error
	for range 3 {
		if _, err := parentsAreDirs(r, key); err != nil {
			return err // checked before the directories are made: MkdirAll would follow a link inside the bucket
		}
		if dir := path.Dir(key); dir != "." {
			if err := r.MkdirAll(dir, 0o755); err != nil {
				last = err
				continue
			}
		}
		filled := false
		last = writeFile(r, key, func(w io.Writer) error { filled = true; return fill(w) }, cond)
		if last == nil || filled || !errors.Is(last, fs.ErrNotExist) {
			break
		}
	}
	if errors.Is(last, objectstore.ErrPreconditionFailed) {
		return last
	}
	return classify(last)
}

// writeFile writes a temporary file beside key with fill and puts it into place (putInPlace).
func writeFile(r *os.Root, key string, fill func(io.Writer) error, cond *objectstore.Precondition) error {
	tmp := path.Join(path.Dir(key), fmt.Sprintf(".%s.%d.writing", path.Base(key), rand.Int64()))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	err = fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = putInPlace(r, tmp, key, cond)
	}
	if err != nil {
		_ = r.Remove(tmp)
	}
	return err
}
