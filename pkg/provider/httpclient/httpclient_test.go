// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package httpclient_test

import (
	"crypto/tls"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// tlsServer is an HTTPS server (HTTP/2 offered) that answers with the protocol it was spoken to
// in, and its certificate in PEM.
func tlsServer(t *testing.T) (*httptest.Server, []byte) {
	return tlsServerCounting(t, nil)
}

// tlsServerCounting is tlsServer counting the connections opened to it in conns (nil: none).
func tlsServerCounting(t *testing.T, conns *atomic.Int32) (*httptest.Server, []byte) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Proto", r.Proto)
	}))
	if conns != nil {
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
	}
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

func mustTransport(t *testing.T, o httpclient.Options) *http.Transport {
	t.Helper()
	tr, err := httpclient.Transport(o)
	if err != nil {
		t.Fatal(err)
	}
	return tr
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
	if _, err := get(t, mustTransport(t, httpclient.Options{CA: string(caPEM), CAKey: "caCert"}), srv.URL); err != nil {
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
	if _, err := get(t, mustTransport(t, httpclient.Options{}), srv.URL); err == nil {
		t.Error("without the CA bundle the server's certificate was accepted")
	}
	if _, err := get(t, mustTransport(t, httpclient.Options{InsecureSkipVerify: true}), srv.URL); err != nil {
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
	tr := mustTransport(t, httpclient.Options{})
	if tr.TLSClientConfig == nil || tr.TLSClientConfig.MinVersion != tls.VersionTLS12 {
		t.Errorf("TLS %+v, want TLS 1.2 at least", tr.TLSClientConfig)
	}
	if tr.MaxIdleConns != def.MaxIdleConns || tr.MaxIdleConnsPerHost != 0 || tr.ResponseHeaderTimeout != 0 ||
		tr.TLSHandshakeTimeout != def.TLSHandshakeTimeout || tr.IdleConnTimeout != def.IdleConnTimeout || tr.Proxy == nil || !tr.ForceAttemptHTTP2 {
		t.Errorf("no options: not Go's defaults: %+v", tr)
	}
	tr = mustTransport(t, httpclient.Options{MaxIdleConnsPerHost: 256, StallTimeout: time.Minute, TLSHandshakeTimeout: 2 * time.Minute})
	if tr.MaxIdleConns != 256 || tr.MaxIdleConnsPerHost != 256 || tr.ResponseHeaderTimeout != 0 || tr.TLSHandshakeTimeout != 2*time.Minute {
		t.Errorf("options not applied: %+v", tr)
	}
	if tr := mustTransport(t, httpclient.Options{MaxIdleConnsPerHost: 64}); tr.MaxIdleConns != def.MaxIdleConns {
		t.Errorf("MaxIdleConns %d, want Go's %d", tr.MaxIdleConns, def.MaxIdleConns)
	}
	if def.MaxIdleConnsPerHost != 0 || def.ResponseHeaderTimeout != 0 {
		t.Error("http.DefaultTransport was changed")
	}
}

func TestTransportProtocols(t *testing.T) {
	srv, caPEM := tlsServer(t)
	for _, tc := range []struct {
		http1 bool
		want  string
	}{{false, "HTTP/2.0"}, {true, "HTTP/1.1"}} {
		rt, err := httpclient.RoundTripper(httpclient.Options{Provider: "test", CA: string(caPEM), CAKey: "caCert", HTTP1: tc.http1})
		if err != nil {
			t.Fatal(err)
		}
		proto, err := get(t, rt, srv.URL)
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

// TestSharedTransports: stores built with equal options share one transport, and so its
// connections; other options (another CA bundle, another provider) get their own; a bundle that
// cannot be parsed is refused naming its key, never kept.
func TestSharedTransports(t *testing.T) {
	var conns atomic.Int32
	srv, caPEM := tlsServerCounting(t, &conns)
	o := httpclient.Options{Provider: "shared-test", CA: string(caPEM), CAKey: "caCert", MaxIdleConnsPerHost: 8}
	a, err := httpclient.Shared(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := httpclient.Shared(o)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("equal options got two transports")
	}
	other := o
	other.CA = ""
	if c, _ := httpclient.Shared(other); c == a {
		t.Fatal("another CA bundle got the same transport")
	}
	other = o
	other.Provider = "shared-test-2"
	if c, _ := httpclient.Shared(other); c == a {
		t.Fatal("another provider got the same transport")
	}
	// Two requests one after the other: the second reuses the first's connection.
	for range 2 {
		rt, err := httpclient.RoundTripper(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := get(t, rt, srv.URL); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("two clients of equal options opened %d connections; want 1", n)
	}
	bad := o
	bad.CA = "not a certificate: s3cr3t"
	if _, err := httpclient.Shared(bad); err == nil || !strings.Contains(err.Error(), "caCert") || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("an unparsable bundle: %v; want an error naming the key, not the value", err)
	}
}
