// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import "sync"

// readAhead bounds a pass's prefetches (objects read whole before they take a write slot, see
// PrefetchMaxBytes) to max at once, each held from before its read until it takes its write slot
// or ends, and starts them in batches: once all max are held, none starts until every one of them
// is released. The source is then asked for max objects together rather than for one each time
// a write ends: a store and this process woken for every small read spend about twice the CPU per
// read (make bench-copy, --cross-repeat: MinIO's and this process's CPU per streamed delta), which
// on a machine they share slows the writes. Acquired by one goroutine (the pass's loop); released
// by any.
type readAhead struct {
	mu      sync.Mutex
	changed *sync.Cond
	held    int
	max     int
	// full is set when all max are held and cleared when none is.
	full bool
}

func newReadAhead(slots int) *readAhead {
	r := &readAhead{max: slots}
	r.changed = sync.NewCond(&r.mu)
	return r
}

// acquire waits until a prefetch may start and takes its slot.
func (r *readAhead) acquire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.full {
		r.changed.Wait()
	}
	r.held++
	r.full = r.held >= r.max
}

// release returns a slot: its prefetch took its write slot, or ended.
func (r *readAhead) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held--
	if r.held == 0 {
		r.full = false
		r.changed.Broadcast()
	}
}
