// Package httpclient builds the HTTP transports of the providers' SDK clients: TLS 1.2 at least,
// an operator's CA bundle trusted besides the system's, Go's transport defaults with the
// provider's connection limits, every request counted by the metrics transport. Each provider
// keeps only what its SDK or store needs differently.
package httpclient

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// DefaultTimeout bounds one request where a provider's RequestTimeout is unset.
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

// Options are what a provider's transport sets beyond Go's defaults.
type Options struct {
	// Provider labels the requests in the metrics (RoundTripper only).
	Provider string
	// TLS is the client's TLS configuration (nil: TLS 1.2 at least, the system's roots).
	TLS *tls.Config
	// MaxIdleConnsPerHost is how many idle connections to one host are kept (0: Go's 2); a
	// store's deletion engine keeps many requests in flight to one host. The idle connections
	// of all hosts are at least as many, and not fewer than Go's 100.
	MaxIdleConnsPerHost int
	// ResponseHeaderTimeout bounds the wait for a response's headers (0: none). It is not a
	// bound on the whole exchange: the body of a listing or of a bulk delete may stream longer.
	ResponseHeaderTimeout time.Duration
	// TLSHandshakeTimeout bounds the TLS handshake (0: Go's 10s).
	TLSHandshakeTimeout time.Duration
	// HTTP1 keeps to HTTP/1.1 (Go's default transport attempts HTTP/2): for a store whose
	// client was built without HTTP/2.
	HTTP1 bool
}

// Transport is Go's default transport (proxy from the environment, 30s dial and keep-alive, 90s
// idle connections) with o's settings. Its requests are not counted: see RoundTripper.
func Transport(o Options) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = o.TLS
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	t.MaxIdleConnsPerHost = o.MaxIdleConnsPerHost
	t.MaxIdleConns = max(t.MaxIdleConns, o.MaxIdleConnsPerHost)
	t.ResponseHeaderTimeout = o.ResponseHeaderTimeout
	if o.TLSHandshakeTimeout != 0 {
		t.TLSHandshakeTimeout = o.TLSHandshakeTimeout
	}
	if o.HTTP1 {
		t.ForceAttemptHTTP2 = false
	}
	return t
}

// RoundTripper is Transport(o) with every request counted by the metrics transport under
// o.Provider.
func RoundTripper(o Options) http.RoundTripper {
	return metrics.Transport(o.Provider, Transport(o))
}
