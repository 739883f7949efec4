// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"

	xrate "golang.org/x/time/rate"
)

// proxy stands between the measuring process and MinIO, in the orchestrating process (so that
// its CPU is not the drill's): it counts requests and bytes answered and can play a cloud
// store's network: a latency before each request is forwarded and a rate per stream (per
// response body), as S3's single-stream GETs run at roughly 50-100 MiB/s.
type proxy struct {
	url      string
	server   *http.Server
	gets     atomic.Int64 // GET of an object
	lists    atomic.Int64 // GET of a bucket (listing)
	others   atomic.Int64
	bytesOut atomic.Int64
}

// startProxy starts a proxy to target with latency before each request and perStream bytes per
// second on each response body (0: none).
func startProxy(target string, latency time.Duration, perStream int64) (*proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{url: "http://" + l.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
	rp.ErrorLog = log.New(io.Discard, "", 0)
	orig := rp.Director
	rp.Director = func(r *http.Request) {
		host := r.Host // the client signed the proxy's host: keep it
		orig(r)
		r.Host = host
	}
	p.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Query().Has("list-type"), r.Method == http.MethodGet && r.URL.Query().Has("versions"):
			p.lists.Add(1)
		case r.Method == http.MethodGet:
			p.gets.Add(1)
		default:
			p.others.Add(1)
		}
		if latency > 0 {
			time.Sleep(latency)
		}
		cw := &countingWriter{ResponseWriter: w, p: p}
		if perStream > 0 {
			cw.limiter = xrate.NewLimiter(xrate.Limit(perStream), 256<<10)
			cw.ctx = r.Context()
		}
		rp.ServeHTTP(cw, r)
	})}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

func (p *proxy) stop() { _ = p.server.Close() }

// countingWriter counts the body bytes written and paces them at limiter's rate.
type countingWriter struct {
	http.ResponseWriter

	p       *proxy
	limiter *xrate.Limiter
	ctx     context.Context
}

func (w *countingWriter) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		chunk := b
		if w.limiter != nil {
			chunk = b[:min(len(b), w.limiter.Burst())]
			if err := w.limiter.WaitN(w.ctx, len(chunk)); err != nil {
				return written, err
			}
		}
		n, err := w.ResponseWriter.Write(chunk)
		written += n
		w.p.bytesOut.Add(int64(n))
		if err != nil {
			return written, err
		}
		b = b[n:]
	}
	return written, nil
}

func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
