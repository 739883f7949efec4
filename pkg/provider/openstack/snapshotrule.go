// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"context"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// snapshotRule is etcd-backup-restore v0.44.1's Swift snapstore (the same in v0.43.0): List
// (pkg/snapstore/swift_snapstore.go:458-498) lists the container's object names (no versions: an
// object whose newest version is a delete marker is not listed) and has no exclude mark (its
// includeAll argument is ignored); Fetch (339-342) downloads the object by name.
var snapshotRule = objectstore.SnapshotRule{
	Versions: objectstore.CurrentVersions,
	Source:   "etcd-backup-restore swift_snapstore.go:339-342, 458-498",
}

// SnapshotRule implements objectstore.DataPlane.
func (s *store) SnapshotRule(_ context.Context, bucket string) (objectstore.SnapshotRule, error) {
	if err := osapi.ValidateBucketName(bucket); err != nil {
		return objectstore.SnapshotRule{}, err
	}
	return snapshotRule, nil
}
