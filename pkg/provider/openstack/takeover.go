// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Container metadata (X-Container-Meta-<name>) that tells whose a container is. Swift returns the
// names in canonical header form, as written here.
const (
	// MetaBucket names the BackupBucket this extension keeps the container for: written when it
	// creates the container, and when it adopts one.
	MetaBucket = "Gardener-Backup-Bucket"
	// MetaAdoptedFrom is written beside MetaBucket when the container was found without it, in the
	// form gardener-extension-provider-openstack v1.57.0 leaves it (see ownership).
	MetaAdoptedFrom = "Gardener-Backup-Adopted-From"
	// AdoptedFromProviderOpenStack is MetaAdoptedFrom's value.
	AdoptedFromProviderOpenStack = "provider-openstack"
)

// ownership is what a container of a bucket's name is to this extension.
type ownership int

const (
	// ownedByUs: marked MetaBucket=<bucket>.
	ownedByUs ownership = iota
	// incumbents: unmarked and without any metadata, exactly as provider-openstack v1.57.0 makes
	// it (pkg/controller/backupbucket/actuator.go:38 calls CreateContainerIfNotExists(bb.Name),
	// pkg/openstack/client/swift.go:62 containers.Create(ctx, client, container, nil): no header,
	// no metadata) and as this extension made it before it marked its containers. Both derive the
	// name from the BackupBucket's name alone, in the project of the bucket's credentials secret.
	incumbents
	// foreign: anything else (marked for another bucket, or carrying metadata neither writes).
	foreign
)

// ownershipOf tells whose the container of bucket is by its metadata (as gophercloud's
// ExtractMetadata returns it). The error of a foreign container names the metadata keys it
// carries, never their values (a Temp-URL key is metadata too).
func ownershipOf(bucket string, md map[string]string) (ownership, error) {
	if v, ok := metaValue(md, MetaBucket); ok {
		if v == bucket {
			return ownedByUs, nil
		}
		return foreign, fmt.Errorf("%w: container %q is marked X-Container-Meta-%s for another bucket: this extension did not make it for the BackupBucket %q and does not touch it",
			objectstore.ErrOwnedByOther, bucket, MetaBucket, bucket)
	}
	if len(md) == 0 {
		return incumbents, nil
	}
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, "X-Container-Meta-"+k)
	}
	slices.Sort(keys)
	return foreign, fmt.Errorf("%w: container %q carries metadata (%s) that neither this extension nor provider-openstack writes: "+
		"it is not taken over and not touched; if it is the BackupBucket's container, mark it (swift post -m %s:%s %s)",
		objectstore.ErrOwnedByOther, bucket, strings.Join(keys, ", "), MetaBucket, bucket, bucket)
}

// metaValue reads a metadata key case-insensitively (Swift canonicalises header names, proxies
// may not).
func metaValue(md map[string]string, key string) (string, bool) {
	for k, v := range md {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// readContainer reads a container's headers and metadata with one HEAD. A missing container is
// a 404 error for the caller to tell.
func readContainer(ctx context.Context, c *gophercloud.ServiceClient, bucket string) (*containers.GetHeader, map[string]string, error) {
	res := containers.Get(ctx, c, bucket, nil)
	head, err := res.Extract()
	if err != nil {
		return nil, nil, err
	}
	md, err := res.ExtractMetadata()
	if err != nil {
		return nil, nil, fmt.Errorf("reading container %q's metadata: %w", bucket, err)
	}
	return head, md, nil
}

// errVersionFound stops the hand-back's versions listing at the first versioned object.
var errVersionFound = errors.New("versioned object found")

// handedBack is handBack's read-back (nil without handBack): provider-openstack v1.57.0 can
// delete what the container holds. Its entry deletion lists current objects by name and
// bulk-deletes them (pkg/controller/backupentry/actuator.go:46, pkg/openstack/client/swift.go:37-55),
// and its container deletion (swift.go:73-89) answers a 409 by deleting the current objects and
// trying again, without end. An object stored by Swift's object versioning (any version ID but
// "null": written while versioning was on, or an older version) outlives both: a DELETE by name,
// with versioning off, only makes it noncurrent, and Swift refuses to delete the container while
// a version is left ("Delete all versions before deleting container"). Tested on Swift 2.30.
// The whole container's versions listing is read (handBack is a one-off before a switch).
//
// readBack false (a plan, which converged nothing) skips the read-back and only lists.
func (s *management) handedBack(ctx context.Context, c *gophercloud.ServiceClient, bucket string, readBack bool) error {
	if !s.cfg.HandBack {
		return nil
	}
	if readBack {
		head, _, err := readContainer(ctx, c, bucket)
		if err != nil {
			return fmt.Errorf("reading container %q back: %w", bucket, classify(err))
		}
		if _, public := withoutPublicGrants(head.Read); head.VersionsEnabled || public {
			return fmt.Errorf("handBack: container %q reads back with versioning %t, read ACL %q after it was converged; retrying",
				bucket, head.VersionsEnabled, strings.Join(head.Read, ","))
		}
	}
	var found objectstore.ObjectVersion
	err := s.ListObjects(ctx, bucket, "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			if o.Version != "" && o.Version != unversioned {
				found = o
				return errVersionFound
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, errVersionFound) && found.Noncurrent:
		return &objectstore.HandBackWaitError{Bucket: bucket, ByOperator: true, Why: fmt.Sprintf("container %q still holds noncurrent object versions (the first is %q, version %s): "+
			"provider-openstack deletes current objects by name only, so they would never be deleted, and its deletion of the container "+
			"would retry without end on Swift's 409; versioning is now off: delete them (swift list --versions %s; "+
			"swift delete %s <object> --version-id <id>) and the next look hands back", bucket, found.Key, found.Version, bucket, bucket)}
	case errors.Is(err, errVersionFound):
		return &objectstore.HandBackWaitError{Bucket: bucket, ByOperator: true, Why: fmt.Sprintf("object %q in container %q was written while versioning was on (version %s): "+
			"provider-openstack's DELETE by name would only make it noncurrent, never delete it; versioning is now off: "+
			"rewrite it unversioned (a PUT of the object with X-Copy-From: %s/<object> writes an unversioned copy), delete the "+
			"noncurrent versions, and the next look hands back", found.Key, bucket, found.Version, bucket)}
	case err != nil:
		return fmt.Errorf("handBack: listing container %q's versions: %w", bucket, err)
	}
	return nil
}
