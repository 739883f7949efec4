package gcp_test

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

func TestConformanceOnFakeGCS(t *testing.T) {
	good := gcs.SecretData()
	conformance.Run(t, conformance.Harness{
		Store:         newStore(t, good),
		NewBucketName: newBucketName,
		Region:        region,
		OtherRegion:   "us-east1",
		// A key the token endpoint has never seen: the JWT bearer grant is refused.
		BadCredentials: newStore(t, with(good, "serviceaccount.json", string(otherKey(t)))),
		ForeignBucket:  func(*testing.T) string { return "foreign-" + newBucketName() },
		ManyObjects:    2500,
	})
}

// otherKey is a well-formed service-account key file whose key the token endpoint refuses.
func otherKey(t *testing.T) []byte {
	t.Helper()
	const email = "revoked@geb-test-project.iam.gserviceaccount.com"
	key := gcs.ServiceAccountKey(email)
	gcs.RevokeServiceAccountKey(email)
	return key
}
