package consumer_test

import (
	"encoding/pem"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const gcpConfigHead = `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"`

// The keys etcd-backup-restore's GCS store reads (gcs_snapstore.go: GOOGLE_APPLICATION_CREDENTIALS
// is <dir>/serviceaccount.json, storageAPIEndpoint beside it); bucketName is gardener's.
var gcsKeys = []string{"serviceaccount.json", "storageAPIEndpoint", "bucketName"}

// gcsConsumer is how etcd-druid runs the sidecar for a gcp entry: GOOGLE_APPLICATION_CREDENTIALS
// at serviceaccount.json in the mounted secret. The sidecar sends no credentials at all to an
// http:// endpoint (it takes one for an emulator), while the GCS front refuses requests without
// a token as GCS does: so the sidecar reaches the front through a TLS terminator here, given
// with --store-endpoint-override (which etcd-druid sets from the Etcd resource's
// spec.backup.store.endpointOverride), and trusts its certificate through SSL_CERT_FILE.
func gcsConsumer(t *testing.T, gcs *stack.GCS) stack.Consumer {
	backend, err := url.Parse(gcs.URL)
	if err != nil {
		t.Fatal(err)
	}
	tls := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(backend))
	t.Cleanup(tls.Close)
	ca := filepath.Join(t.TempDir(), "front.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tls.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return stack.Consumer{StorageProvider: "GCS", CredentialsEnv: "GOOGLE_APPLICATION_CREDENTIALS", File: "serviceaccount.json",
		Flags: []string{"--store-endpoint-override=" + tls.URL + "/storage/v1/"}, Env: []string{"SSL_CERT_FILE=" + ca}}
}

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
	c := gcsConsumer(t, gcs)

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
