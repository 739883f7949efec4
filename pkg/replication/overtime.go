// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// A pass's deadline (Options.Deadline) bounds what the pass starts, not a streamed object in
// flight: a snapshot larger than a pass can stream would otherwise be cut off and started again
// by every pass, and never copied. Such an object goes on while its bytes flow (each request of
// the stores gives up on its own when no byte moves), but it may commit only where the pass's
// Guard allows it, and then within Options.Deadline of that look. While it is read past the
// deadline the Guard is asked every Options.Deadline/2 too, and a refusal cancels the write, so
// that the parts a store writes before its commit (Swift's segments, real objects under the
// key) stop too. A caller that must know when the last write of a pass can land (an entry's
// deletion empties its prefix in the copy only after it) so keeps one bound: every write
// sends its commit within Options.Deadline of the pass's start or of a Guard that allowed it.
// The bound is on when a commit is sent, not when it is stored: a commit request already sent
// when its write is cancelled (aws's CompleteMultipartUpload, gcs's last chunk, azure's Put
// Block List) may still be stored by the store.
//
// The look comes where it can still stop the commit of every store's writer: when the writer
// reads past the source's end (each writer commits only after it read io.EOF and aborts on a read
// error: aws's CompleteMultipartUpload, azure's Put Block List, gcs's Writer.Close, Swift's
// manifest, local's rename), a refusal is the read's error; where the source was read to its end
// before the deadline (the writer still uploading its last parts), at the deadline, a refusal
// cancels the write.

// ErrCommitRefused marks a streamed object whose commit the pass's Guard refused (or could not
// tell) past the pass's deadline, or that was cancelled when not committed within
// Options.Deadline of the look that allowed it. Refused as the writer's read past the source's
// end, the commit is never sent; where the refusal or the timeout cancels a write that read its
// source whole (at the deadline, or later), a commit request already sent may still be stored
// (the store finishes what it received).
var ErrCommitRefused = errors.New("the commit of an object copied past the pass's deadline was refused")

// commitRefused is the Guard's refusal as the writer's read gets it: ErrCommitRefused, with its
// cause's text, and its cause for errors.Is, but never io.EOF (a Guard that failed on a dropped
// connection, a *url.Error of io.EOF, would otherwise read as the stream's end to
// objectstore.ExactStream and aws's writer, and commit). It has no Unwrap for that reason.
type commitRefused struct{ cause error }

func (e commitRefused) Error() string { return ErrCommitRefused.Error() + ": " + e.cause.Error() }

// Is matches ErrCommitRefused and what the cause matches, io.EOF and io.ErrUnexpectedEOF aside.
func (e commitRefused) Is(target error) bool {
	switch target {
	case ErrCommitRefused:
		return true
	case io.EOF, io.ErrUnexpectedEOF:
		return false
	}
	return errors.Is(e.cause, target)
}

// errCutOff is the refusal of a gate without a Guard (never asked: without a Guard the
// deadline ends every write, newSpan), and of a pass given no slot past its deadline
// (Options.OvertimeSlot).
var errCutOff = fmt.Errorf("cut off at the pass's deadline: %w", context.DeadlineExceeded)

// gateState is where one streamed object is with respect to its pass's deadline.
type gateState int

const (
	// gateReading: the source is not read to its end, and the deadline has not passed.
	gateReading gateState = iota
	// gateOvertime: the source is not read to its end, and the deadline has passed: the Guard
	// is asked every Options.Deadline/2 (gateRecheck), so that the parts a write stores before
	// its commit (Swift's segments) stop within that of a refusal.
	gateOvertime
	// gateEnded: the source was read to its end before the deadline: the write commits before
	// it unless the Guard allows it more.
	gateEnded
	// gateAllowed: the Guard allowed the commit (within Options.Deadline of its look).
	gateAllowed
	// gateRefused: the Guard refused or failed (or there is none): nothing may commit.
	gateRefused
)

// gateEvent is what happens to a streamed object.
type gateEvent int

const (
	// gateEnd: the writer reads past the source's end.
	gateEnd gateEvent = iota
	// gateDeadline: the pass's deadline passed.
	gateDeadline
	// gateRecheck: Options.Deadline/2 has passed since the deadline or the last look in
	// overtime.
	gateRecheck
)

// stepGate is the pure decision of a streamed object's gate (table-tested): the next state, and
// whether the Guard is asked first; then next is the state where it allows, and a refusal (or a
// failed look) is gateRefused, the write cancelled.
func stepGate(s gateState, e gateEvent) (next gateState, ask bool) {
	switch {
	case s == gateReading && e == gateEnd:
		return gateEnded, false
	case s == gateReading && e == gateDeadline:
		return gateOvertime, false
	case s == gateOvertime && e == gateEnd, s == gateEnded && e == gateDeadline:
		return gateAllowed, true
	case s == gateOvertime && e == gateRecheck:
		return gateOvertime, true
	}
	return s, false
}

// gate guards one streamed object's commit (stepGate). Its events come from the writer's reads
// (body) and from the pass's deadline (a context.AfterFunc); both hold mu, through the Guard's
// look too, so that the object's state changes one at a time.
type gate struct {
	mu    sync.Mutex
	state gateState
	done  bool
	// refusal is the Guard's refusal, the read's error and the write's cancellation cause.
	refusal error

	// past: the deadline's event was applied (once: by the AfterFunc, or by the source's end
	// found past the deadline by the clock, whichever comes first).
	past bool

	o        objectstore.ObjectVersion
	slot     *overtimeSlot
	start    context.Context // nil where nothing goes past the deadline
	run      context.Context
	cancel   context.CancelCauseFunc
	opts     Options
	deadline func() bool // stops the AfterFunc
	late     *time.Timer // cancels a write allowed to commit and not done within Options.Deadline
	recheck  *time.Timer // gateRecheck, in gateOvertime
}

// newGate is the gate of o's write, whose context cancel cancels; sp says when the deadline
// passes (sp.start's end). Stop it when the write has returned.
func newGate(sp span, o objectstore.ObjectVersion, cancel context.CancelCauseFunc) *gate {
	g := &gate{o: o, slot: sp.slot, run: sp.run, cancel: cancel, opts: sp.opts}
	if sp.start != sp.run {
		g.start = sp.start
		// A refusal at the deadline cancels the write (ask); the returned error is a read's.
		g.deadline = context.AfterFunc(sp.start, func() { _ = g.on(gateDeadline) })
	}
	return g
}

// stop ends the gate: the write returned, and nothing of it is decided any more.
func (g *gate) stop() {
	if g.deadline != nil {
		g.deadline()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.done = true
	if g.late != nil {
		g.late.Stop()
	}
	if g.recheck != nil {
		g.recheck.Stop()
	}
}

// on applies e and returns the error the writer's read past the end gets: io.EOF, or the refusal.
func (g *gate) on(e gateEvent) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return io.EOF
	}
	if e == gateEnd && g.start != nil && !g.past && pastDeadline(g.start) {
		// The deadline passed by the clock, its AfterFunc not yet run (nor, on a busy machine,
		// the context's own timer): the source ended past the deadline, not before it.
		g.apply(gateDeadline)
	}
	g.apply(e)
	if g.state == gateRefused {
		return g.refusal
	}
	return io.EOF
}

// pastDeadline is whether ctx ended or its deadline has passed by the clock: its timer may fire
// later than the deadline.
func pastDeadline(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// apply applies e (mu held); the deadline's event once.
func (g *gate) apply(e gateEvent) {
	if e == gateDeadline {
		if g.past {
			return
		}
		g.past = true
		if g.slot != nil && !g.slot.admit(g.opts) {
			// No slot for the pass past its deadline: cut off, as without a Guard.
			g.state, g.refusal = gateRefused, errCutOff
			g.cancel(errCutOff)
			return
		}
		if g.opts.Overtime != nil {
			g.opts.Overtime(g.o)
		}
	}
	next, ask := stepGate(g.state, e)
	if !ask {
		g.state = next
	} else {
		g.ask(next)
	}
	if g.state == gateOvertime && e != gateEnd {
		g.recheck = time.AfterFunc(g.opts.Deadline/2, func() { _ = g.on(gateRecheck) })
	}
}

// ask asks the Guard (mu held): allowed, the state is next, and a write allowed to commit
// (gateAllowed) is cancelled if it has not returned within Options.Deadline of the look's start;
// refused, the write is cancelled at once.
func (g *gate) ask(next gateState) {
	asked := time.Now()
	err := errCutOff
	if g.opts.Guard != nil {
		if err = g.opts.Guard(g.run); err != nil {
			err = commitRefused{cause: err}
		}
	}
	if err != nil {
		g.state, g.refusal = gateRefused, err
		g.cancel(err)
		return
	}
	if g.state = next; next != gateAllowed {
		return
	}
	// Cancelling a write bounds when its commit is sent, not whether one already sent is stored.
	late := fmt.Errorf("%w: not committed within %s of the look that allowed it", ErrCommitRefused, g.opts.Deadline)
	g.late = time.AfterFunc(g.opts.Deadline-time.Since(asked), func() { g.cancel(late) })
}

// gatedBody is a streamed object's source as its writer reads it: the read past its end is the
// gate's (io.EOF, or the Guard's refusal). Data that comes with the source's io.EOF is returned
// first, alone, so that a writer reading whole parts (io.ReadFull) never drops the refusal.
type gatedBody struct {
	r     io.Reader
	g     *gate
	ended bool
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if b.ended {
		return 0, b.g.on(gateEnd)
	}
	n, err := b.r.Read(p)
	if errors.Is(err, io.EOF) {
		b.ended = true
		if n > 0 {
			return n, nil
		}
		return 0, b.g.on(gateEnd)
	}
	return n, err
}

// span is the contexts a pass runs under: start ends at the pass's deadline (its listings, its
// copies inside the store, the start of every object); run is the caller's, under which a
// streamed object begun before the deadline goes on (gate), where slot admits the pass.
type span struct {
	start, run context.Context
	opts       Options
	slot       *overtimeSlot
}

// overtimeSlot is a pass's one ask of Options.OvertimeSlot, at its first object's deadline.
type overtimeSlot struct {
	mu      sync.Mutex
	asked   bool
	ok      bool
	release func()
}

// admit tells whether the pass may go on past its deadline (asked once).
func (s *overtimeSlot) admit(opts Options) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.asked {
		s.asked, s.ok = true, true
		if opts.OvertimeSlot != nil {
			var release func()
			if release, s.ok = opts.OvertimeSlot(); s.ok {
				s.release = release
			}
		}
	}
	return s.ok
}

// end releases the pass's slot, if it took one.
func (s *overtimeSlot) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.release != nil {
		s.release()
		s.release = nil
	}
}

// newSpan is the span of a pass under ctx (start: ctx until opts.Deadline, where it is set);
// without a Guard nothing goes past the deadline (run is start). Call cancel when the pass has
// ended.
func newSpan(ctx context.Context, opts Options) (sp span, cancel context.CancelFunc) {
	sp = span{start: ctx, run: ctx, opts: opts, slot: &overtimeSlot{}}
	if opts.Deadline <= 0 {
		return sp, func() {}
	}
	var stop context.CancelFunc
	sp.start, stop = context.WithTimeout(ctx, opts.Deadline)
	if opts.Guard == nil {
		sp.run = sp.start
	}
	return sp, func() { stop(); sp.slot.end() }
}
