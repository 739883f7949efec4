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
		// No BadCredentials: Azurite answers a wrong signature with 403 AuthorizationFailure, where
		// Azure answers 403 AuthenticationFailed; the store classifies Azure's codes (table test),
		// and TestWrongKeyIsRefused checks what Azurite gives.
		ManyObjects: 6000,
		// No OtherRegion and no ForeignBucket: a container lives in one account, which has one
		// region, and its name is the account's alone.
	})
}
