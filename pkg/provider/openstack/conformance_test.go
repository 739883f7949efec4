// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

func TestConformanceOnSwift(t *testing.T) {
	defer osprovider.SetStreamLimits(1<<20, 5<<30)()
	conformance.Run(t, conformance.Harness{
		Store:          newStore(t, cloud.SecretData("demo")),
		NewBucketName:  newContainerName,
		Region:         "RegionOne",
		BadCredentials: newStore(t, with(cloud.SecretData("demo"), "password", "wrong")),
		ManyObjects:    600,
		// A static large object of three segments: the manifest PUT carries If-None-Match.
		LargeStreamBytes: 2<<20 + 8,
		Versioning:       versioningOf(t, cloud.SecretData("demo"), "RegionOne"),
		SmallPages:       newStoreWith(t, &osprovider.Provider{ListPageSize: 2}, cloud.SecretData("demo")),
		// A container of the bucket's name that somebody else's metadata marks (see takeover.go):
		// a Swift container lives in one project's account, so no other tenant can take the name.
		ForeignBucket: func(t *testing.T) string {
			name := newContainerName()
			if _, err := containers.Create(context.Background(), swiftAs(t, "demo"), name, containers.CreateOpts{Metadata: map[string]string{"Owner": "team-data"}}).Extract(); err != nil {
				t.Fatal(err)
			}
			return name
		},
		Unsupported: []conformance.Feature{
			// A container cannot sit in another region of its cluster.
			conformance.Regions,
			// Swift has no retention locks and no lifecycle rules (DeferDeletion answers
			// ErrUnsupported).
			conformance.Locks, conformance.Deferral, conformance.DeferralReadBack,
			// etcd-backup-restore's Swift snapstore has no exclude mark (swift_snapstore.go:458).
			conformance.ExcludeMark,
		},
	})
}

func TestConformanceWithoutBulkDelete(t *testing.T) {
	conformance.Run(t, conformance.Harness{
		Store:         newStore(t, with(cloud.SecretData("demo"), "region", "NoBulk")),
		NewBucketName: newContainerName,
		Region:        "NoBulk",
		ManyObjects:   600,
		Versioning:    versioningOf(t, with(cloud.SecretData("demo"), "region", "NoBulk"), "NoBulk"),
		// The same store as above without the bulk-delete middleware: only the deletion differs.
		Unsupported: []conformance.Feature{conformance.BadCredentials, conformance.Regions, conformance.ForeignBuckets, conformance.Locks, conformance.Deferral, conformance.DeferralReadBack, conformance.ExcludeMark},
	})
}

// versioningOf switches a container's versioning through the product's own path: EnsureBucket
// of a store built with the providerConfig converges it to the config's declaration.
func versioningOf(t *testing.T, data map[string][]byte, region string) func(context.Context, string, bool) error {
	stores := map[bool]conformance.Stores{}
	for _, on := range []bool{false, true} {
		stores[on] = newConfiguredStore(t, testProvider, data, &osapi.BackupBucketConfig{Versioning: on})
	}
	return func(ctx context.Context, bucket string, on bool) error {
		return stores[on].EnsureBucket(ctx, objectstore.Bucket{Name: bucket, Region: region})
	}
}
