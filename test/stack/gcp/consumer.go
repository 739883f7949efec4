// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// GCSConsumer is how etcd-druid runs etcd-backup-restore for a gcp entry against the GCS front:
// GOOGLE_APPLICATION_CREDENTIALS at serviceaccount.json in the mounted secret. The sidecar sends
// no credentials to an http:// endpoint while the front refuses requests without a token, as GCS
// does: so the sidecar reaches the front through a TLS terminator, given with
// --store-endpoint-override (etcd-druid sets it from the Etcd resource's
// spec.backup.store.endpointOverride), and trusts its certificate through SSL_CERT_FILE. The
// terminator lives until t ends.
func GCSConsumer(t testing.TB, gcs *GCS) stack.Consumer {
	t.Helper()
	backend, err := url.Parse(gcs.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(backend)
	// The front points resumable uploads back at the scheme and host its client used.
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-Forwarded-Proto", "https")
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(tls.Close)
	ca := filepath.Join(t.TempDir(), "front.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tls.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return stack.Consumer{StorageProvider: "GCS", CredentialsEnv: "GOOGLE_APPLICATION_CREDENTIALS", File: "serviceaccount.json",
		Flags: []string{"--store-endpoint-override=" + tls.URL + "/storage/v1/"}, Env: []string{"SSL_CERT_FILE=" + ca}}
}
