package openstack_test

import (
	"context"
	"testing"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

func TestConformanceOnSwift(t *testing.T) {
	conformance.Run(t, conformance.Harness{
		Store:          newStore(t, cloud.SecretData("demo")),
		NewBucketName:  newContainerName,
		Region:         "RegionOne",
		BadCredentials: newStore(t, with(cloud.SecretData("demo"), "password", "wrong")),
		ManyObjects:    600,
		Versioning:     versioningOf(t, cloud.SecretData("demo"), "RegionOne"),
		SmallPages:     newStoreWith(t, &osprovider.Provider{ListPageSize: 2}, cloud.SecretData("demo")),
		Unsupported: []conformance.Feature{
			// A Swift container lives in one project's account of the region's cluster, so its
			// name can neither be taken by another tenant nor sit in another region.
			conformance.Regions, conformance.ForeignBuckets,
			// Swift has no retention locks and no lifecycle rules (DeferDeletion answers
			// ErrUnsupported).
			conformance.Locks, conformance.Deferral,
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
		Unsupported: []conformance.Feature{conformance.BadCredentials, conformance.Regions, conformance.ForeignBuckets, conformance.Locks, conformance.Deferral},
	})
}

// versioningOf switches a container's versioning through the product's own path: EnsureBucket
// of a store built with the providerConfig converges it to the config's declaration.
func versioningOf(t *testing.T, data map[string][]byte, region string) func(context.Context, string, bool) error {
	stores := map[bool]objectstore.Store{}
	for _, on := range []bool{false, true} {
		stores[on] = newConfiguredStore(t, testProvider, data, &osapi.BackupBucketConfig{Versioning: on})
	}
	return func(ctx context.Context, bucket string, on bool) error {
		return stores[on].EnsureBucket(ctx, objectstore.Bucket{Name: bucket, Region: region})
	}
}
