// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package httpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// ErrStalled is the error of an exchange cut off because the store made no progress for a
// provider's RequestTimeout (see Stall). It is objectstore.ErrUnreachable too.
var ErrStalled = errors.New("no progress from the store")

// stallError is ErrStalled with the bound; Timeout and Temporary let the SDKs' retryers treat it
// as the network timeout it is.
type stallError struct{ after time.Duration }

func (e *stallError) Error() string {
	return fmt.Sprintf("%v for %s: %v", ErrStalled, e.after, objectstore.ErrUnreachable)
}
func (e *stallError) Unwrap() []error { return []error{ErrStalled, objectstore.ErrUnreachable} }
func (e *stallError) Timeout() bool   { return true }
func (e *stallError) Temporary() bool { return true }

// Stall bounds every wait on the store in an exchange by after (0: no bound), instead of the
// whole exchange: the connection and the writing of the request until its body is taken, each
// stretch of the request body's upload, the wait for the response headers, and each read of the
// response body. A body that keeps flowing is never cut off however long it takes (a streamed
// copy or a drill of a large snapshot), while a store that stops sending or taking bytes fails
// the exchange with ErrStalled within after. Time spent in this process is not counted: a
// request body whose own source is slow (a streamed copy's PUT reading the source's GET), or a
// caller that reads the response body slowly, waits on us, not on the store.
func Stall(next http.RoundTripper, after time.Duration) http.RoundTripper {
	if after <= 0 {
		return next
	}
	return &stall{next: next, after: after}
}

type stall struct {
	next  http.RoundTripper
	after time.Duration
}

func (s *stall) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	w := &watchdog{after: s.after, cancel: cancel}
	w.mu.Lock()
	w.timer = time.AfterFunc(s.after, w.fire) // armed: connecting, writing the request
	w.mu.Unlock()
	out := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		out.Body = &requestBody{ReadCloser: req.Body, w: w}
		if req.GetBody != nil {
			out.GetBody = func() (io.ReadCloser, error) {
				b, err := req.GetBody()
				if err != nil || b == nil || b == http.NoBody {
					return b, err
				}
				return &requestBody{ReadCloser: b, w: w}, nil
			}
		}
	}
	resp, err := s.next.RoundTrip(out)
	w.headersArrived()
	if err != nil {
		w.end()
		if w.stalled() {
			return nil, &stallError{after: s.after}
		}
		return nil, err
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		w.end() // nothing more to wait for
		return resp, nil
	}
	resp.Body = &responseBody{ReadCloser: resp.Body, w: w}
	return resp, nil
}

// watchdog cancels an exchange's context when it has been armed for after without a pause. It
// is armed while the exchange waits on the store and paused while it waits on this process.
type watchdog struct {
	after  time.Duration
	cancel context.CancelFunc

	mu      sync.Mutex
	timer   *time.Timer
	fired   bool
	headers bool // the response headers arrived: the request body no longer arms it
	ended   bool
}

func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	w.fired = true
	w.cancel()
}

// arm starts a wait on the store; fromRequest: by the request body's side.
func (w *watchdog) arm(fromRequest bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fired || w.ended || (fromRequest && w.headers) {
		return
	}
	w.timer.Reset(w.after)
}

// pause ends a wait on the store; fromRequest: by the request body's side.
func (w *watchdog) pause(fromRequest bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if fromRequest && w.headers {
		return
	}
	w.timer.Stop()
}

func (w *watchdog) headersArrived() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.headers = true
	w.timer.Stop()
}

func (w *watchdog) stalled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

// end stops the watchdog and releases the exchange's context.
func (w *watchdog) end() {
	w.mu.Lock()
	w.ended = true
	w.timer.Stop()
	w.mu.Unlock()
	w.cancel()
}

// requestBody pauses the watchdog while the transport reads the body from its source (this
// process) and arms it while the transport writes what it read to the store.
type requestBody struct {
	io.ReadCloser

	w *watchdog
}

func (b *requestBody) Read(p []byte) (int, error) {
	b.w.pause(true)
	n, err := b.ReadCloser.Read(p)
	b.w.arm(true)
	return n, err
}

// responseBody arms the watchdog during each read from the store. The exchange ends at the
// body's end or first error as well as at Close: a caller that reads to EOF and closes late (or
// never) holds no timer and no context.
type responseBody struct {
	io.ReadCloser

	w *watchdog
}

func (b *responseBody) Read(p []byte) (int, error) {
	b.w.arm(false)
	n, err := b.ReadCloser.Read(p)
	b.w.pause(false)
	if err == nil {
		return n, nil
	}
	stalled := err != io.EOF && b.w.stalled()
	b.w.end()
	if stalled {
		return n, &stallError{after: b.w.after}
	}
	return n, err
}

func (b *responseBody) Close() error {
	err := b.ReadCloser.Close()
	b.w.end()
	return err
}
