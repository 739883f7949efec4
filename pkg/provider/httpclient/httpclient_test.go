package httpclient_test

import (
	"crypto/tls"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// tlsServer is an HTTPS server (HTTP/2 offered) that answers with the protocol it was spoken to
// in, and its certificate in PEM.
func tlsServer(t *testing.T) (*httptest.Server, []byte) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Proto", r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func get(t *testing.T, rt http.RoundTripper, url string) (string, error) {
	t.Helper()
	resp, err := (&http.Client{Transport: rt, Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	return resp.Header.Get("X-Proto"), nil
}

func TestTLSConfigTrustsTheCABundle(t *testing.T) {
	srv, caPEM := tlsServer(t)
	cfg, err := httpclient.TLSConfig(caPEM, "caCert", false)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 || cfg.InsecureSkipVerify {
		t.Errorf("MinVersion %x, InsecureSkipVerify %v; want TLS 1.2 and verification", cfg.MinVersion, cfg.InsecureSkipVerify)
	}
	if _, err := get(t, httpclient.Transport(httpclient.Options{TLS: cfg}), srv.URL); err != nil {
		t.Errorf("with the server's CA trusted: %v", err)
	}
	// Without the bundle, the system's roots do not know the test server.
	plain, err := httpclient.TLSConfig(nil, "caCert", false)
	if err != nil {
		t.Fatal(err)
	}
	if plain.RootCAs != nil || plain.MinVersion != tls.VersionTLS12 {
		t.Errorf("no bundle: RootCAs %v, MinVersion %x; want the system's roots and TLS 1.2", plain.RootCAs, plain.MinVersion)
	}
	if _, err := get(t, httpclient.Transport(httpclient.Options{TLS: plain}), srv.URL); err == nil {
		t.Error("without the CA bundle the server's certificate was accepted")
	}
	insecure, err := httpclient.TLSConfig(nil, "caCert", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := get(t, httpclient.Transport(httpclient.Options{TLS: insecure}), srv.URL); err != nil {
		t.Errorf("insecure: %v", err)
	}
}

func TestTLSConfigRefusesABundleWithoutCertificates(t *testing.T) {
	const value = "not-a-certificate-s3cr3t"
	for name, check := range map[string]func() error{
		"TLSConfig": func() error { _, err := httpclient.TLSConfig([]byte(value), "trustedCaCert", false); return err },
		"CheckCA":   func() error { return httpclient.CheckCA([]byte(value), "trustedCaCert") },
	} {
		err := check()
		if !errors.Is(err, objectstore.ErrInvalidConfig) {
			t.Fatalf("%s: %v, want ErrInvalidConfig", name, err)
		}
		if want := `secret key "trustedCaCert" holds no PEM certificate that can be parsed`; err.Error() != want {
			t.Errorf("%s: %q, want %q", name, err, want)
		}
		if strings.Contains(err.Error(), value) {
			t.Errorf("%s: the message shows the value: %q", name, err)
		}
	}
	if err := httpclient.CheckCA(nil, "trustedCaCert"); err != nil {
		t.Errorf("CheckCA of no bundle: %v", err)
	}
}

func TestTransport(t *testing.T) {
	def := http.DefaultTransport.(*http.Transport)
	tr := httpclient.Transport(httpclient.Options{})
	if tr.TLSClientConfig == nil || tr.TLSClientConfig.MinVersion != tls.VersionTLS12 {
		t.Errorf("TLS %+v, want TLS 1.2 at least", tr.TLSClientConfig)
	}
	if tr.MaxIdleConns != def.MaxIdleConns || tr.MaxIdleConnsPerHost != 0 || tr.ResponseHeaderTimeout != 0 ||
		tr.TLSHandshakeTimeout != def.TLSHandshakeTimeout || tr.IdleConnTimeout != def.IdleConnTimeout || tr.Proxy == nil || !tr.ForceAttemptHTTP2 {
		t.Errorf("no options: not Go's defaults: %+v", tr)
	}
	tr = httpclient.Transport(httpclient.Options{MaxIdleConnsPerHost: 256, ResponseHeaderTimeout: time.Minute, TLSHandshakeTimeout: 2 * time.Minute})
	if tr.MaxIdleConns != 256 || tr.MaxIdleConnsPerHost != 256 || tr.ResponseHeaderTimeout != time.Minute || tr.TLSHandshakeTimeout != 2*time.Minute {
		t.Errorf("options not applied: %+v", tr)
	}
	if tr := httpclient.Transport(httpclient.Options{MaxIdleConnsPerHost: 64}); tr.MaxIdleConns != def.MaxIdleConns {
		t.Errorf("MaxIdleConns %d, want Go's %d", tr.MaxIdleConns, def.MaxIdleConns)
	}
	if def.MaxIdleConnsPerHost != 0 || def.ResponseHeaderTimeout != 0 {
		t.Error("http.DefaultTransport was changed")
	}
}

func TestTransportProtocols(t *testing.T) {
	srv, caPEM := tlsServer(t)
	cfg, err := httpclient.TLSConfig(caPEM, "caCert", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		http1 bool
		want  string
	}{{false, "HTTP/2.0"}, {true, "HTTP/1.1"}} {
		// A fresh configuration each time: a transport adds its protocols to the one it is given.
		proto, err := get(t, httpclient.RoundTripper(httpclient.Options{Provider: "test", TLS: cfg.Clone(), HTTP1: tc.http1}), srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if proto != tc.want {
			t.Errorf("HTTP1 %v: spoke %s, want %s", tc.http1, proto, tc.want)
		}
	}
}

func TestTimeout(t *testing.T) {
	if got := httpclient.Timeout(0); got != 60*time.Second {
		t.Errorf("Timeout(0) = %v, want 60s", got)
	}
	if got := httpclient.Timeout(time.Second); got != time.Second {
		t.Errorf("Timeout(1s) = %v", got)
	}
}
