// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// TrickleOptions say how a trickle proxy passes the bodies of GET responses on.
type TrickleOptions struct {
	// Chunk bytes are passed on every Every: a body that flows slowly but never stops.
	Chunk int
	Every time.Duration
	// StopAfter, when positive, stops the first GET body that reaches that many bytes without
	// closing the connection: a store that stops sending once (until the client gives up). The
	// smaller bodies of GETs before it (Swift's /info, a listing) pass as they are.
	StopAfter int64
}

// Trickle is a proxy StartTrickle started.
type Trickle struct {
	*httptest.Server

	stopped *atomic.Bool
}

// Stopped tells whether a body reached StopAfter bytes and was stopped.
func (t *Trickle) Stopped() bool { return t.stopped.Load() }

// StartTrickle starts a proxy to target (a real store's endpoint) that passes every request on
// as it is and every GET response's body as o says; other responses pass unchanged. Close it
// when done.
func StartTrickle(target string, o TrickleOptions) (*Trickle, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // every chunk reaches the client at once
	rp.ErrorLog = log.New(io.Discard, "", 0)
	stopped := new(atomic.Bool)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
			resp.Body = &trickle{ReadCloser: resp.Body, o: o, stopped: stopped, done: resp.Request.Context().Done()}
		}
		return nil
	}
	return &Trickle{Server: httptest.NewServer(rp), stopped: stopped}, nil
}

type trickle struct {
	io.ReadCloser

	o       TrickleOptions
	stopped *atomic.Bool // set by the one body that stops
	done    <-chan struct{}
	sent    int64
}

func (t *trickle) Read(p []byte) (int, error) {
	if t.o.StopAfter > 0 && t.sent >= t.o.StopAfter && !t.stopped.Swap(true) {
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

// FlowTimeout is the RequestTimeout of the stores CheckFlowingBodies reads through: its
// trickle takes more than twice as long, with pauses of a fiftieth of it, so that a pause
// stretched by a busy machine stays far from the bound.
const FlowTimeout = 5 * time.Second

// CheckFlowingBodies checks a store's reads against its RequestTimeout (FlowTimeout): it writes
// a snapshot of 1 MiB into bucket with direct, then reads it through a trickle proxy in front of
// target with the store through(proxy URL) builds, whose RequestTimeout must be FlowTimeout. A
// body that flows for more than twice the timeout is read whole; one that stops fails
// with httpclient.ErrStalled (objectstore.ErrUnreachable) within the timeout, or is resumed by
// the store's client (which reads the rest anew), but never waits for the test's guard.
func CheckFlowingBodies(t *testing.T, target string, direct objectstore.Writer, bucket string, through func(t *testing.T, proxyURL string) objectstore.DataPlane) {
	t.Helper()
	ctx := context.Background()
	const key, size = "shoot--a--b--1/etcd-main/v2/Full-00000000-00000001-1", 1 << 20
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	if err := direct.PutObject(ctx, bucket, key, data); err != nil {
		t.Fatal(err)
	}
	read := func(t *testing.T, o TrickleOptions) ([]byte, error) {
		proxy, err := StartTrickle(target, o)
		if err != nil {
			t.Fatal(err)
		}
		defer proxy.Close()
		if o.StopAfter > 0 {
			defer func() {
				if !proxy.Stopped() {
					t.Error("no body reached StopAfter bytes: nothing was stopped")
				}
			}()
		}
		guard, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		r, err := through(t, proxy.URL).OpenObject(guard, bucket, key, "")
		if err != nil {
			return nil, err
		}
		defer r.Close()
		got, err := io.ReadAll(r)
		if guard.Err() != nil {
			t.Fatalf("the test's guard ended the read, not the request timeout: %v", err)
		}
		return got, err
	}
	// 128 chunks of 8 KiB, a fiftieth of the timeout apart: 12.8 s of body against a 5 s bound.
	flowing := TrickleOptions{Chunk: 8 << 10, Every: FlowTimeout / 50}
	t.Run("flowing", func(t *testing.T) {
		got, err := read(t, flowing)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %d of %d bytes: %v", len(got), size, err)
		}
	})
	t.Run("stopped", func(t *testing.T) {
		stops := flowing
		stops.StopAfter = 64 << 10
		got, err := read(t, stops)
		switch {
		case err == nil && bytes.Equal(got, data):
			t.Log("the store's client resumed the read after the stall") // gcp's reader does
		case err == nil:
			t.Fatalf("read %d of %d bytes, no error", len(got), size)
		case !errors.Is(err, httpclient.ErrStalled) || !errors.Is(err, objectstore.ErrUnreachable):
			t.Fatalf("read %d bytes, error %v; want ErrStalled (ErrUnreachable)", len(got), err)
		}
	})
}
