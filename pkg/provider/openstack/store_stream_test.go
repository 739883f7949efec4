// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

// TestRefusedStreamNeverCancelsASegmentInFlight: a stream that fails while a segment's PUT is in
// flight leaves no segment, even where Swift stores a PUT its client gave up on after the
// cleanup deleted that name. The front plays that Swift: it holds the first segment's PUT (its
// body received whole) until the stream has failed; a client that cancels the PUT then sees it
// stored only after the cleanup's DELETE of that name has passed. A store that cancels a segment
// write in flight on the stream's failure leaves that segment behind.
func TestRefusedStreamNeverCancelsASegmentInFlight(t *testing.T) {
	defer osprovider.SetStreamLimits(64<<10, 5<<30)()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	direct := newStore(t, cloud.SecretData("demo"))
	name := newContainerName()
	if err := direct.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "RegionOne"}); err != nil {
		t.Fatal(err)
	}
	front := newLateSegmentFront(t, ctx, cloud.SwiftURL)
	viaFront := newStoreWith(t, &osprovider.Provider{EndpointRewrite: front.rewrite}, cloud.SecretData("demo"))
	w := viaFront.Writer.(objectstore.StreamWriter)
	r := io.MultiReader(bytes.NewReader(make([]byte, 64<<10)), signallingErr{ctx, front.received, front.failed})
	if err := w.PutObjectStream(ctx, name, "failing", r, 3*64<<10); err == nil {
		t.Fatal("a failing stream was written")
	}
	select {
	case <-front.done:
	case <-ctx.Done():
		t.Fatal("the front never saw the first segment's PUT end")
	}
	left, err := conformance.ListKeys(ctx, direct, name, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("a failed stream left %v (the store cancelled a segment write in flight: %t)", left, front.cancelled.Load())
	}
}

// signallingErr fails a stream once the front has received the first segment whole, and closes
// failed.
type signallingErr struct {
	ctx              context.Context
	received, failed chan struct{}
}

func (s signallingErr) Read([]byte) (int, error) {
	select {
	case <-s.received:
	case <-s.ctx.Done():
	}
	close(s.failed)
	return 0, errors.New("connection reset")
}

// lateSegmentFront is a Swift front that stores a first segment's PUT late when its client
// cancelled it (see TestRefusedStreamNeverCancelsASegmentInFlight).
type lateSegmentFront struct {
	rewrite   func(string) string
	received  chan struct{} // closed when the first segment's PUT body was received whole
	failed    chan struct{} // closed by the stream's failure
	done      chan struct{} // closed when the held PUT has ended, stored or answered
	cancelled atomic.Bool   // the client cancelled the held PUT
}

func newLateSegmentFront(t *testing.T, ctx context.Context, swiftURL string) *lateSegmentFront {
	t.Helper()
	target, err := url.Parse(swiftURL)
	if err != nil {
		t.Fatal(err)
	}
	f := &lateSegmentFront{received: make(chan struct{}), failed: make(chan struct{}), done: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(target)
	deleted := make(chan struct{})
	var deleteOnce sync.Once
	firstSegment := func(r *http.Request) bool {
		return strings.Contains(r.URL.Path, "/slo-") && strings.HasSuffix(r.URL.Path, "/00000000")
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodDelete && firstSegment(r):
			proxy.ServeHTTP(w, r)
			deleteOnce.Do(func() { close(deleted) })
			return
		case r.Method != http.MethodPut || !firstSegment(r):
			proxy.ServeHTTP(w, r)
			return
		}
		defer close(f.done)
		body, err := io.ReadAll(r.Body)
		close(f.received)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		replay := func(ctx context.Context) *http.Request {
			out := r.Clone(ctx)
			out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			return out
		}
		select {
		case <-f.failed:
		case <-ctx.Done():
			return
		}
		select {
		case <-r.Context().Done():
			// Given up on after it was sent whole: stored once the cleanup's DELETE has passed.
			f.cancelled.Store(true)
			select {
			case <-deleted:
			case <-ctx.Done():
				return
			}
			proxy.ServeHTTP(httptest.NewRecorder(), replay(context.WithoutCancel(r.Context())))
		case <-time.After(time.Second): // a client that waits for its answer gets it
			proxy.ServeHTTP(w, replay(r.Context()))
		}
	}))
	t.Cleanup(server.Close)
	f.rewrite = func(endpoint string) string { return strings.Replace(endpoint, swiftURL, server.URL, 1) }
	return f
}
