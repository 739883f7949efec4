// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	localapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// MarkerFile is the file EnsureBucket writes into every bucket directory it makes: a directory
// without it is someone else's (objectstore.ErrOwnedByOther), and nothing in it is listed,
// deleted or written. Listings never show it.
const MarkerFile = ".gardener-extension-backup"

// markerContent says what the marker is to whoever finds it.
const markerContent = "This directory is a backup bucket of gardener-extension-backup (type local).\n" +
	"Without this file the extension treats the directory as someone else's and never touches it.\n"

// errForeign is the error of a directory without the marker (or a bucket name that is a symbolic
// link or a file): the extension never touches it.
func errForeign(bucket string) error {
	return fmt.Errorf("%w: %q under the root is not a directory this extension made (no regular file %s in it, or a symbolic link): it is left untouched",
		objectstore.ErrOwnedByOther, bucket, MarkerFile)
}

// store reaches bucket directories under root. It holds no state per request.
type store struct {
	root     string
	pageSize int
}

// bucketPath is the bucket's directory after its name is checked.
func (s *store) bucketPath(bucket string) (string, error) {
	if err := localapi.ValidateBucketName(bucket); err != nil {
		return "", err
	}
	return filepath.Join(s.root, bucket), nil
}

// openBucket opens a bucket directory of ours as an os.Root, which resolves every path inside it
// and refuses to leave it (a symbolic link pointing out is an error, never followed). The bucket
// itself must be a real directory, not a link, holding the marker as a regular file. A missing
// bucket is objectstore.ErrBucketNotFound; another's is objectstore.ErrOwnedByOther.
func (s *store) openBucket(bucket string) (*os.Root, error) {
	dir, err := s.bucketPath(bucket)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %q", objectstore.ErrBucketNotFound, bucket)
	}
	if err != nil {
		return nil, classify(err)
	}
	if !fi.IsDir() {
		return nil, errForeign(bucket)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, classify(err)
	}
	if mi, err := r.Lstat(MarkerFile); err != nil || !mi.Mode().IsRegular() {
		_ = r.Close()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, classify(err)
		}
		return nil, errForeign(bucket)
	}
	return r, nil
}

// checkKey refuses a key that is not a clean relative path of the bucket: empty, absolute, with
// "." or ".." or empty components, a NUL, a trailing "/", or the marker itself.
func checkKey(key string) error {
	switch {
	case key == "", strings.HasPrefix(key, "/"), strings.HasSuffix(key, "/"), strings.ContainsRune(key, 0), path.Clean(key) != key:
		return objectstore.Invalidf("object key %q is not a clean relative path", key)
	case key == MarkerFile:
		return objectstore.Invalidf("object key %q is the bucket's ownership marker", key)
	}
	for _, c := range strings.Split(key, "/") {
		if c == "." || c == ".." {
			return objectstore.Invalidf("object key %q is not a clean relative path", key)
		}
	}
	return nil
}

// parentsAreDirs checks that every directory on key's path is a real directory, not a symbolic
// link (os.Root already keeps a link from leading out of the bucket; this keeps one from leading
// to another entry). gone is true when a parent is missing: the object is gone too.
func parentsAreDirs(r *os.Root, key string) (gone bool, err error) {
	parts := strings.Split(key, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		fi, err := r.Lstat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return true, nil
		case err != nil:
			return false, classify(err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return false, fmt.Errorf("%w: %q is a symbolic link: the local provider never follows one", objectstore.ErrForbidden, dir)
		case !fi.IsDir():
			return true, nil
		}
	}
	return false, nil
}
