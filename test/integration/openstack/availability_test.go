// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestBucketAvailabilityFollowsTheStore deletes the Swift container and the generated
// application credentials in Keystone behind the extension's back.
func TestBucketAvailabilityFollowsTheStore(t *testing.T) {
	env.AvailabilityFlow(t, framework.Availability{
		Operator:  cloud.SecretData("demo"),
		Config:    configHead + `,"generatedCredentials":{"rotation":{"period":"720h","gracePeriod":"1h"}}}`,
		Generated: true,
	})
}
