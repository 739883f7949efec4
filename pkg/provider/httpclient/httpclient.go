// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package httpclient builds the HTTP transports of the providers' SDK clients: TLS 1.2 at least,
// an operator's CA bundle trusted besides the system's, Go's transport defaults with the
// provider's connection limits, every request counted by the metrics transport. Each provider
// keeps only what its SDK or store needs differently.
package httpclient

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"sync"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// DefaultTimeout is a provider's RequestTimeout where it is unset: the longest wait on the store
// in one exchange (Options.StallTimeout).
const DefaultTimeout = 60 * time.Second

// Timeout is d, or DefaultTimeout where d is unset.
func Timeout(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultTimeout
	}
	return d
}

// CheckCA refuses a CA bundle (the secret's key caKey) without a certificate that can be parsed;
// an empty one is no bundle. The message names the key, never the value.
func CheckCA(caPEM []byte, caKey string) error {
	if len(caPEM) > 0 && !x509.NewCertPool().AppendCertsFromPEM(caPEM) {
		return objectstore.Invalidf("secret key %q holds no PEM certificate that can be parsed", caKey)
	}
	return nil
}

// TLSConfig is TLS 1.2 at least, with caPEM (the secret's key caKey; empty: none) trusted
// besides the system's roots, and verification skipped only when the operator asks for it.
func TLSConfig(caPEM []byte, caKey string, insecure bool) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure} //nolint:gosec // only when the operator asks for it
	if len(caPEM) == 0 {
		return cfg, nil
	}
	if err := CheckCA(caPEM, caKey); err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	pool.AppendCertsFromPEM(caPEM)
	cfg.RootCAs = pool
	return cfg, nil
}

// Options are what a provider's transport sets beyond Go's defaults. Options is comparable:
// equal options share one transport (see Shared).
type Options struct {
	// Provider labels the requests in the metrics (Shared only).
	Provider string
	// CA is a PEM bundle trusted besides the system's roots (empty: none), from the secret's key
	// CAKey (named in errors, never its value).
	CA    string
	CAKey string
	// InsecureSkipVerify skips the server's certificate verification: only when the operator
	// asks for it.
	InsecureSkipVerify bool
	// MaxIdleConnsPerHost is how many idle connections to one host are kept (0: Go's 2); a
	// store's deletion engine keeps many requests in flight to one host. The idle connections
	// of all hosts are at least as many, and not fewer than Go's 100.
	MaxIdleConnsPerHost int
	// StallTimeout bounds each wait on the store in an exchange (0: none; RoundTripper only):
	// the request's upload, the response headers, each read of the response body (see Stall).
	// It is not a bound on the whole exchange: a large object's body, a listing or a bulk
	// delete's streamed result may flow longer, and the caller's context bounds it.
	StallTimeout time.Duration
	// TLSHandshakeTimeout bounds the TLS handshake (0: Go's 10s).
	TLSHandshakeTimeout time.Duration
	// HTTP1 keeps to HTTP/1.1 (Go's default transport attempts HTTP/2): for a store whose
	// client was built without HTTP/2.
	HTTP1 bool
}

// Transport is a new transport: Go's default one (proxy from the environment, 30s dial and
// keep-alive, 90s idle connections) with o's settings and TLS 1.2 at least. Its requests are not
// counted: see Shared.
func Transport(o Options) (*http.Transport, error) {
	tlsConfig, err := TLSConfig([]byte(o.CA), o.CAKey, o.InsecureSkipVerify)
	if err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tlsConfig
	t.MaxIdleConnsPerHost = o.MaxIdleConnsPerHost
	t.MaxIdleConns = max(t.MaxIdleConns, o.MaxIdleConnsPerHost)
	if o.TLSHandshakeTimeout != 0 {
		t.TLSHandshakeTimeout = o.TLSHandshakeTimeout
	}
	if o.HTTP1 {
		t.ForceAttemptHTTP2 = false
	}
	return t, nil
}

// maxShared bounds the transports kept for sharing: one per distinct Options, which differ only
// by provider and an operator's CA bundle, so a handful. Past it the oldest is let go (its idle
// connections closed; requests in flight on it finish).
const maxShared = 64

var shared = struct {
	mu         sync.Mutex
	transports map[Options]*http.Transport
	order      []Options
}{transports: map[Options]*http.Transport{}}

// Shared is the one transport for o, built by Transport on first use. The controllers build a
// store per request: with a transport each, every reconcile opened new connections (a TLS
// handshake each, on a real cloud) and left them idle for 90 s, thousands at once on a seed with
// thousands of entries. A transport holds no credentials (requests are signed or authorized
// above it), so stores of different secrets share it safely. Its requests are not counted: see
// RoundTripper.
func Shared(o Options) (*http.Transport, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if t, ok := shared.transports[o]; ok {
		return t, nil
	}
	t, err := Transport(o)
	if err != nil {
		return nil, err
	}
	if len(shared.order) == maxShared {
		oldest := shared.order[0]
		shared.transports[oldest].CloseIdleConnections()
		delete(shared.transports, oldest)
		shared.order = shared.order[1:]
	}
	shared.transports[o] = t
	shared.order = append(shared.order, o)
	return t, nil
}

// Default is the shared transport of Go's defaults with TLS 1.2 at least. It cannot fail: there
// is no CA bundle to parse.
func Default() *http.Transport {
	t, err := Shared(Options{})
	if err != nil {
		panic(err) // unreachable: Options{} has no CA
	}
	return t
}

// RoundTripper is Shared(o) with every wait on the store bounded by o.StallTimeout (Stall) and
// every request counted by the metrics transport under o.Provider.
func RoundTripper(o Options) (http.RoundTripper, error) {
	t, err := Shared(o)
	if err != nil {
		return nil, err
	}
	return metrics.Transport(o.Provider, Stall(t, o.StallTimeout)), nil
}
