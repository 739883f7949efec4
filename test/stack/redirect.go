// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Redirect is an HTTPS forward proxy for a program whose cloud endpoints are fixed in its code
// (provider-gcp's storage.googleapis.com, provider-azure's well-known clouds): the program runs
// unchanged with HTTPS_PROXY pointing here and SSL_CERT_FILE naming this proxy's own CA (Go's
// http.ProxyFromEnvironment and crypto/x509 read both), and every CONNECT to a routed host is
// answered with a certificate of that CA for the host and its requests served by the route's
// handler (a stand-in). A CONNECT to any other host is refused (403) and recorded, so the program
// reaches nothing but the stand-ins. Loopback addresses are never proxied (ProxyFromEnvironment),
// so endpoints a program is given as loopback URLs are reached directly.
type Redirect struct {
	// URL is the proxy's address, for HTTPS_PROXY.
	URL string
	// CAFile is the PEM file of the CA, for SSL_CERT_FILE.
	CAFile string

	routes map[string]http.Handler // by host; a key with a leading dot matches every host under it
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	server *http.Server

	mu      sync.Mutex
	certs   map[string]*tls.Certificate
	hosts   []string // every CONNECT host, routed or not, in order
	refused []string
}

// StartRedirect starts the proxy with its CA written into dir. routes maps a host
// ("storage.googleapis.com") or a domain (".blob.core.windows.net") to the stand-in that answers
// for it.
func StartRedirect(dir string, routes map[string]http.Handler) (*Redirect, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gardener-extension-backup test redirect CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	r := &Redirect{CAFile: filepath.Join(dir, "redirect-ca.pem"), routes: routes, ca: ca, caKey: key, certs: map[string]*tls.Certificate{}}
	if err := os.WriteFile(r.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.URL = "http://" + l.Addr().String()
	r.server = &http.Server{Handler: http.HandlerFunc(r.connect), ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = r.server.Serve(l) }()
	return r, nil
}

// Env is the environment a program needs to go through the proxy.
func (r *Redirect) Env() []string {
	return []string{"HTTPS_PROXY=" + r.URL, "https_proxy=" + r.URL, "SSL_CERT_FILE=" + r.CAFile, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost"}
}

// Client is a client that goes through r as a program with HTTPS_PROXY and SSL_CERT_FILE
// does.
func (r *Redirect) Client(t testing.TB) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(r.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("no CA in", r.CAFile)
	}
	proxy, _ := url.Parse(r.URL)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(proxy)
	tr.TLSClientConfig.RootCAs = roots
	return &http.Client{Transport: tr}
}

// Hosts returns every host a CONNECT asked for, in order; Refused those that had no route.
func (r *Redirect) Hosts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.hosts)
}

// Refused returns the CONNECT hosts that had no route.
func (r *Redirect) Refused() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.refused)
}

// Close stops the proxy; tunnels already open end with their connections.
func (r *Redirect) Close() { _ = r.server.Close() }

func (r *Redirect) route(host string) http.Handler {
	if h, ok := r.routes[host]; ok {
		return h
	}
	for k, h := range r.routes {
		if strings.HasPrefix(k, ".") && strings.HasSuffix(host, k) {
			return h
		}
	}
	return nil
}

func (r *Redirect) connect(w http.ResponseWriter, req *http.Request) {
	host, _, err := net.SplitHostPort(req.Host)
	if err != nil {
		host = req.Host
	}
	r.mu.Lock()
	r.hosts = append(r.hosts, host)
	r.mu.Unlock()
	h := r.route(host)
	if req.Method != http.MethodConnect || h == nil {
		r.mu.Lock()
		r.refused = append(r.refused, req.Method+" "+req.Host)
		r.mu.Unlock()
		http.Error(w, "no stand-in for "+req.Host, http.StatusForbidden)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		conn.Close()
		return
	}
	cert, err := r.cert(host)
	if err != nil {
		conn.Close()
		return
	}
	tlsConn := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})
	// One connection, served as long as the client keeps it: Serve returns after the first
	// Accept, the connection's own goroutine goes on.
	srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	_ = srv.Serve(&oneConn{conn: tlsConn})
}

// cert returns the certificate the proxy presents for host, signed by its CA.
func (r *Redirect) cert(host string) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.certs[host]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, r.ca, &key.PublicKey, r.caKey)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	r.certs[host] = c
	return c, nil
}

// oneConn is a listener that accepts one connection.
type oneConn struct {
	mu   sync.Mutex
	conn net.Conn
}

func (l *oneConn) Accept() (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil, errors.New("served")
	}
	c := l.conn
	l.conn = nil
	return c, nil
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// ForwardTo is a route handler that forwards every request to the stand-in at target (its base
// URL); transport reaches it (nil: http.DefaultTransport; an httptest TLS server's Client's
// transport for one over TLS).
func ForwardTo(target string, transport http.RoundTripper) (http.Handler, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("route target %q: %w", target, err)
	}
	return &httputil.ReverseProxy{
		Rewrite:   func(p *httputil.ProxyRequest) { p.SetURL(u) },
		Transport: transport,
		ErrorLog:  log.New(io.Discard, "", 0),
	}, nil
}
