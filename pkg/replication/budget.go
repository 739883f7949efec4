// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import (
	"sync"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// DefaultMaxBufferBytes is a pass's byte budget unless told otherwise: the writers' buffers of
// the objects streamed at once stay below it (aws: a snapshot above 16 MiB holds 64 MiB of parts,
// so two of them at once, or one and up to 64 MiB of small ones).
const DefaultMaxBufferBytes = 128 << 20

// budget is a pass's byte budget. Objects are started in order; each first takes what its write
// buffers (bufferOf) from the budget and returns it when done, so that the bytes held at once
// stay within the budget whatever the mix of sizes: a large object waits for its share rather
// than add to the small ones', and small ones queue behind it. An object needing more than the
// whole budget takes all of it and runs alone. Acquired by one goroutine (the pass's loop);
// released by any.
type budget struct {
	mu         sync.Mutex
	released   *sync.Cond
	total, use int64
	peak       int64
}

func newBudget(total int64) *budget {
	b := &budget{total: total}
	b.released = sync.NewCond(&b.mu)
	return b
}

// acquire waits until n bytes (at most the whole budget) are free, takes them and returns what it
// took.
func (b *budget) acquire(n int64) int64 {
	n = min(n, b.total)
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.use+n > b.total {
		b.released.Wait()
	}
	b.use += n
	b.peak = max(b.peak, b.use)
	return n
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.use -= n
	b.released.Broadcast()
}

// bufferOf is what copying o to dst holds in memory: nothing for a server-side copy (server),
// the destination's stated need (objectstore.StreamBuffer), else the whole object (a writer that
// states nothing may read it whole, as memstore does).
func bufferOf(dst To, o objectstore.ObjectVersion, server bool) int64 {
	switch {
	case server:
		return 0
	case isStreamBuffer(dst.Store):
		return dst.Store.(objectstore.StreamBuffer).StreamBufferBytes(o.Size)
	default:
		return o.Size
	}
}

func isStreamBuffer(d Destination) bool { _, ok := d.(objectstore.StreamBuffer); return ok }
