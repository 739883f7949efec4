package azure_test

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

func TestConformanceOnAzurite(t *testing.T) {
	good := azurite.SecretData()
	conformance.Run(t, conformance.Harness{
		Store:         newStore(t, good),
		NewBucketName: newBucketName,
		Region:        "westeurope",
		// A well-formed key of the right length that is not the account's.
		BadCredentials: newStore(t, with(good, "storageKey", "QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5QmFkS2V5"+"QmFkS2V5")),
		ManyObjects:    6000,
		// No OtherRegion and no ForeignBucket: a container lives in one account, which has one
		// region, and its name is the account's alone.
	})
}
