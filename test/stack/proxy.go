// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a reverse proxy on loopback in front of a real server. It adds a fixed delay to every
// request (standing in for a real network's round trip), can throttle every n-th batch deletion
// with S3's 503 SlowDown, can play "bucket owned by another account" for buckets of a name prefix (a
// behaviour MinIO has no notion of), and counts what passes.
type Proxy struct {
	URL string

	delay         time.Duration
	throttleEvery int64
	foreignPrefix string
	// down makes the proxy drop every connection unanswered, as an unreachable store does.
	down atomic.Bool

	deletes   atomic.Int64
	Throttled atomic.Int64
	onRequest func(r *http.Request, status int)
	before    func(r *http.Request)
	// methods counts the requests answered, by HTTP method.
	methods sync.Map // string -> *atomic.Int64
	// ForeignWrites counts requests other than HEAD/GET/create for a foreign bucket that were
	// (wrongly) let through; the proxy answers them itself, so any count is a defect.
	ForeignWrites atomic.Int64

	mu       sync.Mutex
	server   *http.Server
	listener net.Listener
}

// ProxyOptions configure a Proxy.
type ProxyOptions struct {
	Delay         time.Duration
	ThrottleEvery int
	// ForeignPrefix, if set, makes every bucket whose name starts with it "owned by another account".
	ForeignPrefix string
	// OnRequest, if set, is called after every request the proxy answered, with the request and
	// the status code it answered with (from one goroutine per request: it must be safe for
	// concurrent use). Benchmarks count and log what passes with it.
	OnRequest func(r *http.Request, status int)
	// BeforeRequest, if set, is called with every request before it is forwarded (from one
	// goroutine per request). It may read r.Body if it puts an equivalent reader back, as the
	// scale benchmark does to record the keys of batch deletions.
	BeforeRequest func(r *http.Request)
	// OnError, if set, is called with every request the proxy could not forward and why (it
	// answers them 502), from one goroutine per request.
	OnError func(r *http.Request, err error)
}

// StartProxy starts a proxy to target.
func StartProxy(target string, opts ProxyOptions) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{URL: "http://" + l.Addr().String(), delay: opts.Delay, throttleEvery: int64(opts.ThrottleEvery), foreignPrefix: opts.ForeignPrefix, onRequest: opts.OnRequest, before: opts.BeforeRequest, listener: l}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second}
	rp.ErrorLog = log.New(io.Discard, "", 0) // clients that give up (deadlines, cancelled reconciles) are normal here
	if opts.OnError != nil {
		rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
			opts.OnError(r, err)
			w.WriteHeader(http.StatusBadGateway)
		}
	}
	p.server = &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := &statusWriter{ResponseWriter: rw, status: http.StatusOK}
		defer p.count(r, w)
		if p.down.Load() {
			p.drop(w)
			return
		}
		if p.delay > 0 {
			time.Sleep(p.delay)
		}
		if p.before != nil {
			p.before(r)
		}
		bucket := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0]
		if p.foreignPrefix != "" && strings.HasPrefix(bucket, p.foreignPrefix) {
			p.answerForeign(w, r)
			return
		}
		if r.Method == http.MethodPost && r.URL.Query().Has("delete") {
			n := p.deletes.Add(1)
			if p.throttleEvery > 0 && n%p.throttleEvery == 0 {
				p.Throttled.Add(1)
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`))
				return
			}
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

// statusWriter remembers the status code a handler answered with.
type statusWriter struct {
	http.ResponseWriter

	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (p *Proxy) count(r *http.Request, w *statusWriter) {
	c, _ := p.methods.LoadOrStore(r.Method, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
	if p.onRequest != nil {
		p.onRequest(r, w.status)
	}
}

// Methods returns how many requests the proxy answered so far, by HTTP method.
func (p *Proxy) Methods() map[string]int64 {
	out := map[string]int64{}
	p.methods.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// SetDown makes the store unreachable through the proxy (every connection is closed without an
// answer) or reachable again.
func (p *Proxy) SetDown(down bool) { p.down.Store(down) }

// drop closes the client's connection without an answer (a 502 if it cannot be taken over).
func (p *Proxy) drop(w *statusWriter) {
	if hj, ok := w.ResponseWriter.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			w.status = 0
			return
		}
	}
	w.WriteHeader(http.StatusBadGateway)
}

// answerForeign answers like AWS does for a bucket of another account: HEAD is 403 without a
// body, creating it is 409 BucketAlreadyExists, anything else is 403 AccessDenied.
func (p *Proxy) answerForeign(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/xml")
	isCreate := r.Method == http.MethodPut && r.URL.RawQuery == "" && strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0
	switch {
	case r.Method == http.MethodHead:
		w.WriteHeader(http.StatusForbidden)
	case isCreate:
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>BucketAlreadyExists</Code><Message>The requested bucket name is not available.</Message></Error>`))
	default:
		if r.Method != http.MethodGet {
			p.ForeignWrites.Add(1)
		}
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`))
	}
}

// Close stops the proxy.
func (p *Proxy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.server.Close()
}

// ParseDelays parses a comma-separated list of durations (the benchmarks' --delays flag).
func ParseDelays(list string) ([]time.Duration, error) {
	var delays []time.Duration
	for _, d := range strings.Split(list, ",") {
		v, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil {
			return nil, fmt.Errorf("bad delay %q: %w", d, err)
		}
		delays = append(delays, v)
	}
	return delays, nil
}
