// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// wire counts what one pass sends through the proxy: listing pages (and whether they asked for
// snapshots and versions), Blob Batch requests with their body sizes, every other request, and
// how long the proxy took to answer each kind (Azurite's own time plus the added delay).
type wire struct {
	mu        sync.Mutex
	lists     int
	include   map[string]int
	batches   int
	batchSize []int64
	other     int
	// failed counts the answers other than 2xx by kind and status (a 502 is the proxy's: the
	// store closed the connection; the SDK retries those, and 5xx answers of the store).
	failed    map[string]int
	errors    []string // the first few reasons the proxy answered 502
	busy      map[string]time.Duration
	started   time.Time
	firstList time.Duration // from the pass's start to the first listing answered
}

func newWire() *wire {
	return &wire{failed: map[string]int{}, include: map[string]int{}, busy: map[string]time.Duration{}, started: time.Now()}
}

// observe is the proxy's OnRequest: r was answered now, having started at `since`.
func (w *wire) observe(r *http.Request, status int, since time.Time) {
	q := r.URL.Query()
	took := time.Since(since)
	w.mu.Lock()
	defer w.mu.Unlock()
	if status < 200 || status > 299 {
		w.failed[fmt.Sprintf("%s %d", q.Get("comp"), status)]++
	}
	switch q.Get("comp") {
	case "list":
		w.lists++
		w.include[q.Get("include")]++
		w.busy["list"] += took
		if w.firstList == 0 {
			w.firstList = time.Since(w.started)
		}
	case "batch":
		w.batches++
		w.batchSize = append(w.batchSize, r.ContentLength)
		w.busy["batch"] += took
	default:
		w.other++
		w.busy["other"] += took
	}
}

func (w *wire) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var inc []string
	for k, n := range w.include {
		if k == "" {
			k = "(none)"
		}
		inc = append(inc, fmt.Sprintf("%s x%d", k, n))
	}
	slices.Sort(inc)
	sizes := slices.Clone(w.batchSize)
	slices.Sort(sizes)
	var total int64
	for _, s := range sizes {
		total += s
	}
	spread := "-"
	if len(sizes) > 0 {
		spread = fmt.Sprintf("%d..%d B, %.0f KiB in all", sizes[0], sizes[len(sizes)-1], float64(total)/1024)
	}
	failed := fmt.Sprint(w.failed)
	if len(w.errors) > 0 {
		failed += " (" + strings.Join(w.errors, "; ") + ")"
	}
	return fmt.Sprintf("list %d [include %s] (%.1f s answering, first after %.2f s), batch %d (%s; %.1f s answering), other %d, not 2xx %s",
		w.lists, strings.Join(inc, ", "), w.busy["list"].Seconds(), w.firstList.Seconds(), w.batches, spread, w.busy["batch"].Seconds(), w.other, failed)
}

// timedProxy wraps the proxy's OnRequest with the request's start time (BeforeRequest stamps it).
type timedProxy struct {
	mu      sync.Mutex
	started map[*http.Request]time.Time
	current *wire
}

func (t *timedProxy) before(r *http.Request) {
	t.mu.Lock()
	t.started[r] = time.Now()
	t.mu.Unlock()
}

func (t *timedProxy) after(r *http.Request, status int) {
	t.mu.Lock()
	since, ok := t.started[r]
	delete(t.started, r)
	w := t.current
	t.mu.Unlock()
	if !ok {
		since = time.Now()
	}
	if w != nil {
		w.observe(r, status, since)
	}
}

// failure records why the proxy could not forward r (its answer is a 502).
func (t *timedProxy) failure(r *http.Request, err error) {
	t.mu.Lock()
	w := t.current
	t.mu.Unlock()
	if w != nil {
		w.mu.Lock()
		if len(w.errors) < 5 {
			w.errors = append(w.errors, fmt.Sprintf("%s: %v", r.URL.Query().Get("comp"), err))
		}
		w.mu.Unlock()
	}
}

// pass starts counting a new pass and returns its counter.
func (t *timedProxy) pass() *wire {
	w := newWire()
	t.mu.Lock()
	t.current = w
	t.mu.Unlock()
	return w
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
