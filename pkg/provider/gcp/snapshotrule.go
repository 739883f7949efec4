// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"

	"cloud.google.com/go/storage"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// snapshotRule is etcd-backup-restore v0.44.1's GCS snapstore (the same in v0.43.0): List
// (pkg/snapstore/gcs_snapstore.go:303-346) lists the live objects (a Query without Versions: no
// noncurrent generation) and leaves out those whose metadata has x-etcd-snapshot-exclude=true
// (324); Fetch (175-179) reads the live object by name. The listing carries the metadata
// (listAttrs), so the rule costs no request.
var snapshotRule = objectstore.SnapshotRule{
	Versions:  objectstore.CurrentVersions,
	Exclusion: objectstore.ExcludeMarked,
	Source:    "etcd-backup-restore gcs_snapstore.go:303-346",
}

// SnapshotRule implements objectstore.DataPlane.
func (s *store) SnapshotRule(_ context.Context, bucket string) (objectstore.SnapshotRule, error) {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return objectstore.SnapshotRule{}, err
	}
	return snapshotRule, nil
}

// MarkExcluded implements the conformance suite's exclude-mark hook (a test Writer's): it sets
// the metadata entry on the live object as an operator excludes a snapshot.
func (s *store) MarkExcluded(ctx context.Context, bucket, key string) error {
	_, err := s.client.Bucket(bucket).Object(key).Update(ctx, storage.ObjectAttrsToUpdate{Metadata: map[string]string{objectstore.ExcludeMarkKey: "true"}})
	return classifyBucket(err)
}
