// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"testing"

	"cloud.google.com/go/storage"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

func TestConformanceOnFakeGCS(t *testing.T) {
	good := gcs.SecretData()
	client := rawClient(t, good)
	store := newStore(t, good)
	defer gcpprovider.SetStreamChunkSize(256 << 10)() // GCS's smallest chunk
	conformance.Run(t, conformance.Harness{
		Store:         store,
		MarkExcluded:  conformance.MarkerOf(store),
		NewBucketName: newBucketName,
		Region:        region,
		OtherRegion:   "us-east1",
		// A key the token endpoint has never seen: the JWT bearer grant is refused.
		BadCredentials: newStore(t, with(good, "serviceaccount.json", string(otherKey(t)))),
		ForeignBucket:  func(*testing.T) string { return "foreign-" + newBucketName() },
		ManyObjects:    2500,
		// A resumable upload of three chunks (ifGenerationMatch is checked at its finalization).
		LargeStreamBytes: 512<<10 + 8,
		// The bucket's versioning setting: fake-gcs-server keeps noncurrent generations.
		Versioning: func(ctx context.Context, bucket string, on bool) error {
			_, err := client.Bucket(bucket).Update(ctx, storage.BucketAttrsToUpdate{VersioningEnabled: on})
			return err
		},
		SmallPages:     smallPages(t, good),
		DeferralCovers: deferralCovers(client),
		// fake-gcs-server holds objects by the bucket's retention policy only, not one key until
		// a time of its own; deferral_test.go covers generations held by that policy.
		Unsupported: []conformance.Feature{conformance.Locks},
	})
}

// smallPages is the store with listing pages of 3 objects.
func smallPages(t *testing.T, data map[string][]byte) conformance.Stores {
	t.Helper()
	p := &gcpprovider.Provider{IAMEndpoint: testProvider.IAMEndpoint, ListPageSize: 3}
	return conformance.StoresFor(t, p, provider.Credentials{Data: data, Region: region}, &gcpapi.BackupBucketConfig{})
}

// otherKey is a well-formed service-account key file whose key the token endpoint refuses.
func otherKey(t *testing.T) []byte {
	t.Helper()
	const email = "revoked@geb-test-project.iam.gserviceaccount.com"
	key := gcs.ServiceAccountKey(email)
	gcs.RevokeServiceAccountKey(email)
	return key
}
