// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package httpclient_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// stallAfter is the shortened bound of these tests; the servers pause a tenth of it between
// chunks of a flowing body.
const stallAfter = 500 * time.Millisecond

// guard bounds each exchange far beyond stallAfter: a stall that is not cut off fails the test
// with the guard's error instead of hanging it.
const guard = time.Minute

func stallClient(t *testing.T) *http.Client {
	t.Helper()
	rt, err := httpclient.RoundTripper(httpclient.Options{Provider: "test", StallTimeout: stallAfter})
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: rt}
}

// flowing writes n chunks, pausing a tenth of stallAfter before each: the body takes longer
// than stallAfter, but bytes keep flowing.
func flowing(w http.ResponseWriter, n int) {
	w.WriteHeader(http.StatusOK)
	for range n {
		time.Sleep(stallAfter / 10)
		_, _ = w.Write(bytes.Repeat([]byte("x"), 1024))
		w.(http.Flusher).Flush()
	}
}

func getStalling(t *testing.T, url string) (int64, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stallClient(t).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if ctx.Err() != nil {
		t.Fatalf("the guard of %s ended the exchange, not the stall bound: %v", guard, err)
	}
	return n, err
}

func wantStalled(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, httpclient.ErrStalled) || !errors.Is(err, objectstore.ErrUnreachable) {
		t.Fatalf("error %v, want ErrStalled (and ErrUnreachable)", err)
	}
}

// TestStallBoundsEachWaitNotTheBody: a GET whose body flows for several times the bound is read
// whole; one whose body stops, or whose headers never come, fails with ErrStalled (within the
// bound, not the test's guard).
func TestStallBoundsEachWaitNotTheBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/flowing":
			flowing(w, 30) // 3 x stallAfter
		case "/stops":
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("some bytes"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "/no-headers":
			<-r.Context().Done()
		}
	}))
	defer srv.Close()

	n, err := getStalling(t, srv.URL+"/flowing")
	if err != nil || n != 30*1024 {
		t.Fatalf("flowing body: read %d bytes, %v; want %d, no error", n, err, 30*1024)
	}
	_, err = getStalling(t, srv.URL+"/stops")
	wantStalled(t, err)
	_, err = getStalling(t, srv.URL+"/no-headers")
	wantStalled(t, err)
}

// TestStallCountsOnlyWaitsOnTheStore: a caller that reads a body slowly, or a request body whose
// own source is slow (a streamed copy's PUT reading another store's GET), is not cut off; a
// store that stops taking the request body is.
func TestStallCountsOnlyWaitsOnTheStore(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/small":
			_, _ = w.Write([]byte("0123456789"))
		case "/upload":
			n, err := io.Copy(io.Discard, r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			_, _ = io.WriteString(w, strings.Repeat("x", int(n)))
		case "/refuses-upload":
			<-release // never reads the body (the server notices no client gone before it has)
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()

	t.Run("slow reader", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/small", nil)
		resp, err := stallClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		time.Sleep(3 * stallAfter) // this process is busy elsewhere
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "0123456789" {
			t.Fatalf("read %q, %v after a pause of the reader", b, err)
		}
	})

	t.Run("slow request body source", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			for range 3 {
				time.Sleep(stallAfter) // the source is slow: a wait on this process
				_, _ = pw.Write([]byte("abc"))
			}
			_ = pw.Close()
		}()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/upload", pr)
		resp, err := stallClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if b, err := io.ReadAll(resp.Body); err != nil || len(b) != 9 {
			t.Fatalf("answer %q, %v; want 9 bytes taken", b, err)
		}
	})

	t.Run("store stops taking the upload", func(t *testing.T) {
		body := bytes.NewReader(make([]byte, 256<<20)) // far more than the sockets' buffers
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/refuses-upload", body)
		resp, err := stallClient(t).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if ctx.Err() != nil {
			t.Fatalf("the guard ended the exchange, not the stall bound: %v", err)
		}
		wantStalled(t, err)
	})
}

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestStallEndsAtTheBodysEnd: the exchange (its watchdog and context) ends when the response
// body is read to its end or fails, and at once for a response without a body, not only when
// the caller closes the body.
func TestStallEndsAtTheBodysEnd(t *testing.T) {
	cases := []struct {
		name string
		body func() io.ReadCloser
	}{
		{name: "read to EOF", body: func() io.ReadCloser { return io.NopCloser(strings.NewReader("snapshot")) }},
		{name: "a failing read", body: func() io.ReadCloser { return io.NopCloser(io.MultiReader(strings.NewReader("snap"), iotestErr{})) }},
		{name: "no body", body: func() io.ReadCloser { return http.NoBody }},
		{name: "a nil body", body: func() io.ReadCloser { return nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var exchange context.Context
			rt := httpclient.Stall(roundTripFunc(func(req *http.Request) (*http.Response, error) {
				exchange = req.Context()
				return &http.Response{StatusCode: http.StatusOK, Body: c.body()}, nil
			}), guard)
			req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://store.invalid/b/k", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Body != nil {
				_, _ = io.ReadAll(resp.Body) // not closed
			}
			if exchange.Err() == nil {
				t.Fatal("the exchange's context is still live after the body's end without Close")
			}
		})
	}
}

// iotestErr is a read error that is not io.EOF.
type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
