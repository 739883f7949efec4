// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// bucketMode is the bucket directory's mode, converged by EnsureBucket: gardener's provider-local
// makes its bucket directories 0775 so that etcd-backup-restore, in the directory's group, can
// write into the mounted directory.
const bucketMode fs.FileMode = 0o775

// management is the management plane: the data plane's store (a directory has no settings of the
// providerConfig to converge).
type management struct {
	*store
}

// EnsureBucket implements objectstore.Management. A new bucket appears whole: its directory is
// made under a hidden temporary name with the marker in it and renamed into place, so that no
// bucket of ours is ever seen without its marker. An existing directory is ours only with the
// marker; its mode is converged. Region is ignored: a directory has none.
func (m *management) EnsureBucket(ctx context.Context, b objectstore.Bucket) error {
	for range 2 {
		changes, err := m.plan(b)
		if err != nil || len(changes) == 0 {
			return err
		}
		if changes[0].Setting != "bucket" {
			dir, _ := m.bucketPath(b.Name)
			return classify(os.Chmod(dir, bucketMode))
		}
		dir, _ := m.bucketPath(b.Name)
		if err := m.create(ctx, b.Name, dir); err != nil {
			return err
		}
	}
	return nil
}

// PlanBucket implements objectstore.BucketPlanner: the bucket directory to create, or its mode to
// converge.
func (m *management) PlanBucket(_ context.Context, b objectstore.Bucket) ([]objectstore.BucketChange, error) {
	return m.plan(b)
}

// plan reads the bucket directory and returns what EnsureBucket changes.
func (m *management) plan(b objectstore.Bucket) ([]objectstore.BucketChange, error) {
	dir, err := m.bucketPath(b.Name)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(m.root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: the root directory of the buckets (--%s) is missing or not a directory: is its volume mounted?", objectstore.ErrUnreachable, FlagRoot)
	}
	r, err := m.openBucket(b.Name)
	if errors.Is(err, objectstore.ErrBucketNotFound) {
		return []objectstore.BucketChange{{Setting: "bucket", Action: objectstore.ChangeCreate, Detail: fmt.Sprintf("a directory with mode %v and the marker %s", bucketMode, MarkerFile)}}, nil
	}
	if err != nil {
		return nil, err
	}
	_ = r.Close()
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, classify(err)
	}
	if fi.Mode().Perm() != bucketMode {
		return []objectstore.BucketChange{{Setting: "directory mode", Action: objectstore.ChangeUpdate, Detail: fmt.Sprintf("%v -> %v", fi.Mode().Perm(), bucketMode)}}, nil
	}
	return nil, nil
}

// create makes the bucket directory with its marker under a temporary name and renames it into
// place; a bucket made meanwhile by another worker wins, and the next check sees it.
func (m *management) create(_ context.Context, name, dir string) error {
	tmp, err := os.MkdirTemp(m.root, ".creating-"+name+"-")
	if err != nil {
		return classify(err)
	}
	defer func() { _ = os.RemoveAll(tmp) }() // only ours: a fresh directory with the marker in it
	if err := os.WriteFile(filepath.Join(tmp, MarkerFile), []byte(markerContent), 0o644); err != nil {
		return classify(err)
	}
	if err := os.Chmod(tmp, bucketMode); err != nil {
		return classify(err)
	}
	// RENAME_NOREPLACE: a plain rename would replace an empty directory someone else made meanwhile.
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_NOREPLACE); err != nil && !errors.Is(err, fs.ErrExist) {
		return classify(&os.LinkError{Op: "rename", Old: tmp, New: dir, Err: err})
	}
	return nil
}

// DeleteBucket implements objectstore.Management: a bucket that holds no file but its marker
// (directories left empty may remain) is removed; a missing one is success; someone else's is
// never touched.
func (m *management) DeleteBucket(ctx context.Context, name string) error {
	r, err := m.openBucket(name)
	if errors.Is(err, objectstore.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var dirs []string
	err = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case p == "." || p == MarkerFile:
			return nil
		case d.IsDir():
			dirs = append(dirs, p)
			return nil
		}
		return fmt.Errorf("%w: %q holds %q", objectstore.ErrBucketNotEmpty, name, p)
	})
	if err != nil {
		_ = r.Close()
		return classify(err)
	}
	slices.Reverse(dirs) // children before their parents
	for _, d := range dirs {
		if err := r.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			_ = r.Close()
			return fmt.Errorf("%w: %q: %w", objectstore.ErrBucketNotEmpty, name, err)
		}
	}
	err = r.Remove(MarkerFile)
	_ = r.Close()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return classify(err)
	}
	dir := filepath.Join(m.root, name)
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Something was written meanwhile: the bucket stays, and stays ours.
		if werr := os.WriteFile(filepath.Join(dir, MarkerFile), []byte(markerContent), 0o644); werr != nil {
			return fmt.Errorf("%w: %q was written to while it was deleted, and its marker could not be put back: %w", objectstore.ErrBucketNotEmpty, name, werr)
		}
		return fmt.Errorf("%w: %q was written to while it was deleted: %w", objectstore.ErrBucketNotEmpty, name, err)
	}
	return nil
}
