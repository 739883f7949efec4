// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// snapshotRule is etcd-backup-restore v0.44.1's ABS snapstore (the same in v0.43.0): List
// (pkg/snapstore/abs_snapstore.go:269-321) lists with Versions (277-284), so every version of a
// blob (current and previous, a deleted blob's too) is a snapshot of its own, not its blob
// snapshots; it leaves out an item whose blob index tags hold x-etcd-snapshot-exclude=true
// (298-307); Fetch (255-266) downloads the blob by name: its current version, whichever version
// was listed, and nothing for a blob that has none left. The listing carries the tags
// (ListObjects includes them), so the rule costs no request.
var snapshotRule = objectstore.SnapshotRule{
	Versions:  objectstore.EveryVersion,
	Exclusion: objectstore.ExcludeMarked,
	Source:    "etcd-backup-restore abs_snapstore.go:255-321",
}

// SnapshotRule implements objectstore.DataPlane.
func (s *store) SnapshotRule(_ context.Context, bucket string) (objectstore.SnapshotRule, error) {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return objectstore.SnapshotRule{}, err
	}
	return snapshotRule, nil
}

// excludeMarked reads etcd-backup-restore's mark from a listed item's blob index tags.
func excludeMarked(it *container.BlobItem) bool {
	if it.BlobTags == nil {
		return false
	}
	for _, t := range it.BlobTags.BlobTagSet {
		if deref(t.Key) == objectstore.ExcludeMarkKey && deref(t.Value) == "true" {
			return true
		}
	}
	return false
}

// MarkExcluded implements the conformance suite's exclude-mark hook (a test Writer's): it sets
// the blob index tag on the blob's current version as an operator excludes a snapshot.
func (s *store) MarkExcluded(ctx context.Context, bucket, key string) error {
	c, err := s.container(ctx, bucket)
	if err != nil {
		return err
	}
	if _, err := c.NewBlobClient(key).SetTags(ctx, map[string]string{objectstore.ExcludeMarkKey: "true"}, nil); err != nil {
		return fmt.Errorf("tagging %q in container %q: %w", key, bucket, s.classify(err))
	}
	return nil
}
