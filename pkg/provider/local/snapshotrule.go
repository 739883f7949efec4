// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	"context"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// snapshotRule is etcd-backup-restore v0.44.1's local snapstore (the same in v0.43.0): List
// (pkg/snapstore/local_snapstore.go:71-103) walks the directory's files, no versions and no
// exclude mark; Fetch reads the file.
var snapshotRule = objectstore.SnapshotRule{
	Versions: objectstore.CurrentVersions,
	Source:   "etcd-backup-restore local_snapstore.go:71-103",
}

// SnapshotRule implements objectstore.DataPlane.
func (s *store) SnapshotRule(_ context.Context, bucket string) (objectstore.SnapshotRule, error) {
	r, err := s.openBucket(bucket)
	if err != nil {
		return objectstore.SnapshotRule{}, err
	}
	return snapshotRule, r.Close()
}
