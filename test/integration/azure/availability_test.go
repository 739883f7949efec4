package azure_test

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestBucketAvailabilityFollowsTheStore with an account key (the operator's storage account):
// the container is deleted in Azurite behind the extension's back.
func TestBucketAvailabilityFollowsTheStore(t *testing.T) {
	env.AvailabilityFlow(t, framework.Availability{Operator: azurite.SecretData()})
}

// TestServicePrincipalBucketAvailabilityFollowsTheStore with a service principal (the ARM
// stand-in): the extension's storage account (and with it the container) is deleted behind its
// back; the generated key is rotated.
func TestServicePrincipalBucketAvailabilityFollowsTheStore(t *testing.T) {
	env.AvailabilityFlow(t, framework.Availability{
		Operator:  arm.ServicePrincipal(),
		Generated: true,
		// Azurite cannot regenerate keys: the ARM stand-in's accounts share Azurite's stand-in
		// account, which accepts both of its key values whichever was "regenerated" (see
		// stack.ARM), so a key revoked behind the extension's back still answers the probe.
		NoRevocation: "Azurite accepts a regenerated (revoked) account key (see stack.ARM)",
	})
}
