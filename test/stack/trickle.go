// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"time"
)

// TrickleOptions say how a trickle proxy passes the bodies of GET responses on.
type TrickleOptions struct {
	// Chunk bytes are passed on every Every: a body that flows slowly but never stops.
	Chunk int
	Every time.Duration
	// StopAfter, when positive, stops the body after that many bytes without closing the
	// connection: a store that stops sending (until the client gives up).
	StopAfter int64
}

// StartTrickle starts a proxy to target (a real store's endpoint) that passes every request on
// as it is and every GET response's body as o says; other responses pass unchanged. Close it
// when done.
func StartTrickle(target string, o TrickleOptions) (*httptest.Server, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // every chunk reaches the client at once
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
			resp.Body = &trickle{ReadCloser: resp.Body, o: o, done: resp.Request.Context().Done()}
		}
		return nil
	}
	return httptest.NewServer(rp), nil
}

type trickle struct {
	io.ReadCloser
	o    TrickleOptions
	done <-chan struct{}
	sent int64
}

func (t *trickle) Read(p []byte) (int, error) {
	if t.o.StopAfter > 0 && t.sent >= t.o.StopAfter {
		<-t.done // the client gave up
		return 0, io.ErrUnexpectedEOF
	}
	if t.sent > 0 {
		select {
		case <-time.After(t.o.Every):
		case <-t.done:
			return 0, io.ErrUnexpectedEOF
		}
	}
	if len(p) > t.o.Chunk {
		p = p[:t.o.Chunk]
	}
	n, err := t.ReadCloser.Read(p)
	t.sent += int64(n)
	return n, err
}
