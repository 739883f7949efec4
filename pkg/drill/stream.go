// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

const (
	// deltaMemory is the most of one delta a fetch holds in memory; a larger delta spills to a
	// file in the scratch directory.
	deltaMemory = 1 << 20
	// aheadBytes bounds the deltas downloaded but not yet sent to the restore (in memory or
	// spilled): a new download starts only while they hold less. So the download runs ahead
	// while etcd restores the full snapshot, and the queue holds at most aheadBytes plus the
	// downloads in flight, however long the chain.
	aheadBytes = 32 << 20
)

// deltaQueue downloads a chain's deltas, up to n at once, and hands them to send in order.
type deltaQueue struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	results []chan fetchedDelta
	slots   chan struct{} // downloads in flight
	deltas  []Snapshot

	mu   sync.Mutex
	cond *sync.Cond
	held int64 // bytes downloaded, not yet sent
	done bool  // stopped
}

// fetchedDelta is one delta's download: the verified content, or why there is none.
type fetchedDelta struct {
	buf     *spill
	payload int64
	err     error
}

// startDeltas starts downloading deltas into memory (up to spillAbove bytes each) or dir with up
// to n fetches at once.
func startDeltas(ctx context.Context, f *fetcher, deltas []Snapshot, dir string, n, spillAbove int) *deltaQueue {
	ctx, cancel := context.WithCancel(ctx)
	q := &deltaQueue{cancel: cancel, results: make([]chan fetchedDelta, len(deltas)), slots: make(chan struct{}, n), deltas: deltas}
	q.cond = sync.NewCond(&q.mu)
	for i := range q.results {
		q.results[i] = make(chan fetchedDelta, 1)
	}
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		for i, d := range deltas {
			if !q.room(ctx) {
				for _, ch := range q.results[i:] {
					ch <- fetchedDelta{err: ctx.Err()}
				}
				return
			}
			q.wg.Add(1)
			go func() {
				defer q.wg.Done()
				buf := &spill{path: filepath.Join(dir, deltaFile(i)), limit: spillAbove}
				payload, err := f.copyVerified(ctx, d, buf, deltaBuffer)
				if err != nil {
					buf.discard()
				}
				q.hold(payload)
				<-q.slots
				q.results[i] <- fetchedDelta{buf: buf, payload: payload, err: err}
			}()
		}
	}()
	return q
}

// room waits until a download may start: a slot free and less than aheadBytes held. It takes
// the slot; false when ctx ended.
func (q *deltaQueue) room(ctx context.Context) bool {
	select {
	case q.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.held >= aheadBytes && !q.done {
		q.cond.Wait()
	}
	if q.done || ctx.Err() != nil {
		<-q.slots
		return false
	}
	return true
}

// hold adds n bytes to what the queue holds (negative: released).
func (q *deltaQueue) hold(n int64) {
	q.mu.Lock()
	q.held += n
	q.mu.Unlock()
	q.cond.Broadcast()
}

// writeError is a failed write to the restore's stream: the restore stopped reading (its result
// says why).
type writeError struct{ err error }

func (e writeError) Error() string { return "sending a delta to the restore: " + e.err.Error() }
func (e writeError) Unwrap() error { return e.err }

// send writes every delta, in order, to w as a frame (the JSON's length as 8 bytes big-endian,
// then the JSON without its hash) once it is downloaded and verified. It stops at the first
// delta that failed (its error: a finding or the store's) or at the first failed write (a
// writeError).
func (q *deltaQueue) send(w io.Writer) error {
	for i, ch := range q.results {
		d := <-ch
		if d.err != nil {
			return d.err
		}
		err := d.buf.writeFrame(w, d.payload)
		d.buf.discard()
		q.hold(-d.payload)
		if err != nil {
			return writeError{fmt.Errorf("delta %s: %w", q.deltas[i].Key, err)}
		}
	}
	return nil
}

// stop ends every download still running and waits for them; what they held is released.
func (q *deltaQueue) stop() {
	q.cancel()
	q.mu.Lock()
	q.done = true
	q.mu.Unlock()
	q.cond.Broadcast()
	q.wg.Wait()
	for _, ch := range q.results {
		select {
		case d := <-ch:
			if d.buf != nil {
				d.buf.discard()
			}
		default:
		}
	}
}

// spill holds a delta in memory up to limit bytes and in a new file at path beyond that.
type spill struct {
	path  string
	limit int
	mem   []byte
	file  *os.File
}

func (s *spill) Write(p []byte) (int, error) {
	if s.file == nil && len(s.mem)+len(p) <= s.limit {
		s.mem = append(s.mem, p...)
		return len(p), nil
	}
	if s.file == nil {
		f, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return 0, err
		}
		s.file = f
		if _, err := f.Write(s.mem); err != nil {
			return 0, err
		}
		s.mem = nil
	}
	return s.file.Write(p)
}

// writeFrame writes the first payload bytes held as one frame to w.
func (s *spill) writeFrame(w io.Writer, payload int64) error {
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(payload))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	if s.file == nil {
		_, err := w.Write(s.mem[:payload])
		return err
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.CopyBuffer(w, io.LimitReader(s.file, payload), make([]byte, deltaBuffer))
	return err
}

// discard releases what s holds (its file removed).
func (s *spill) discard() {
	s.mem = nil
	if s.file != nil {
		s.file.Close()
		os.Remove(s.path)
		s.file = nil
	}
}
