// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestReadAheadStartsInBatches: once all slots are held, a slot released does not let the next
// prefetch start; the last one released does.
func TestReadAheadStartsInBatches(t *testing.T) {
	r := newReadAhead(3)
	for i := range 3 {
		if r.full {
			t.Fatalf("full after %d of 3 acquired", i)
		}
		r.acquire()
	}
	if !r.full {
		t.Fatalf("not full with 3 of 3 held")
	}
	r.release()
	r.release()
	if !r.full {
		t.Errorf("a prefetch may start with 1 of 3 still held; want none until all are released")
	}
	r.release()
	if r.full || r.held != 0 {
		t.Errorf("held %d, full %v after all were released; want 0, not full", r.held, r.full)
	}
}

// TestReadAheadNeverHoldsMoreThanMax: acquired by one goroutine, released by many, at most max
// are held at once and every acquire returns.
func TestReadAheadNeverHoldsMoreThanMax(t *testing.T) {
	const slots, n = 4, 1000
	r := newReadAhead(slots)
	var held, peak atomic.Int64
	var wg sync.WaitGroup
	for range n {
		r.acquire()
		peak.Store(max(peak.Load(), held.Add(1))) // only this goroutine raises held
		wg.Go(func() {
			held.Add(-1)
			r.release()
		})
	}
	wg.Wait()
	if p := peak.Load(); p > slots {
		t.Errorf("%d held at once; want at most %d", p, slots)
	}
	if r.held != 0 || r.full {
		t.Errorf("held %d, full %v at the end; want 0, not full", r.held, r.full)
	}
}
