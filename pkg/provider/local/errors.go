// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// classify wraps a filesystem error with its objectstore sentinel (errors.Is on the errno, never
// message text).
func classify(err error) error { return objectstore.Classify(err, classOf) }

func classOf(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return objectstore.ErrNotFound
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS), errors.Is(err, syscall.ELOOP):
		return objectstore.ErrForbidden
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return objectstore.ErrQuotaExceeded
	case errors.Is(err, syscall.ENAMETOOLONG):
		return objectstore.ErrInvalidConfig
	case errors.Is(err, syscall.ENOTEMPTY):
		return objectstore.ErrBucketNotEmpty
	}
	return nil
}
