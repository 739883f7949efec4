package openstack_test

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

func TestConformanceOnSwift(t *testing.T) {
	conformance.Run(t, conformance.Harness{
		Store:          newStore(t, cloud.SecretData("demo")),
		NewBucketName:  newContainerName,
		Region:         "RegionOne",
		BadCredentials: newStore(t, with(cloud.SecretData("demo"), "password", "wrong")),
		ManyObjects:    600,
		// No OtherRegion and no ForeignBucket: a Swift container lives in one project's account
		// of the region's cluster, so its name can neither be taken by another tenant nor sit
		// in another region.
	})
}

func TestConformanceWithoutBulkDelete(t *testing.T) {
	conformance.Run(t, conformance.Harness{
		Store:         newStore(t, with(cloud.SecretData("demo"), "region", "NoBulk")),
		NewBucketName: newContainerName,
		Region:        "NoBulk",
		ManyObjects:   600,
	})
}
