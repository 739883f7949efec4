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

	deletes   atomic.Int64
	Throttled atomic.Int64
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
	p := &Proxy{URL: "http://" + l.Addr().String(), delay: opts.Delay, throttleEvery: int64(opts.ThrottleEvery), foreignPrefix: opts.ForeignPrefix, listener: l}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second}
	rp.ErrorLog = log.New(io.Discard, "", 0) // clients that give up (deadlines, cancelled reconciles) are normal here
	p.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.delay > 0 {
			time.Sleep(p.delay)
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
