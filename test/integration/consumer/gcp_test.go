package consumer_test

import (
	"testing"

	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const gcpConfigHead = `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`

// The keys etcd-backup-restore's GCS store reads (gcs_snapstore.go: GOOGLE_APPLICATION_CREDENTIALS
// is <dir>/serviceaccount.json, storageAPIEndpoint beside it); bucketName is gardener's.
var gcsKeys = []string{"serviceaccount.json", "storageAPIEndpoint", "bucketName"}

// Workload identity is not run: the sidecar accepts an external account configuration only with
// token_url https://sts.googleapis.com/v1/token (validateExternalAccountCredentials), which no
// stand-in can answer here.
func TestGCP(t *testing.T) {
	t.Parallel()
	gcs, err := stack.StartGCS(stack.GCSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gcs.Stop)
	env, err := framework.Start(&gcpprovider.Provider{IAMEndpoint: gcs.URL + "/"}, "europe-west1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	c := stack.GCSConsumer(t, gcs)

	// The GCS front keeps tokens minted before a key's deletion valid: the rotation is proven by
	// the sidecar's rebuilt store and its next snapshot.
	for _, m := range []mode{
		{name: "operator service account key", operator: gcs.SecretData(), keys: gcsKeys},
		{name: "generated service account key", operator: gcs.SecretData(),
			config: gcpConfigHead + `,"generatedCredentials":{"rotation":{"gracePeriod":"15s"}}}`, generated: true, keys: gcsKeys},
	} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			run(t, env, c, m)
		})
	}
}
