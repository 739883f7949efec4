// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestBucketAvailabilityFollowsTheStore deletes the bucket in fake-gcs-server and deletes the
// generated service account's keys in the IAM stand-in behind the extension's back.
func TestBucketAvailabilityFollowsTheStore(t *testing.T) {
	env.AvailabilityFlow(t, framework.Availability{
		Operator:  gcs.SecretData(),
		Config:    `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","generatedCredentials":{"rotation":{"gracePeriod":"1h"}}}`,
		Generated: true,
	})
}
