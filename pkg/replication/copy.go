// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package replication copies an entry's snapshots from one object store to another, of the same
// type or not: the second copy of a seed's backups. One pass observes (one listing of the
// entry's prefix in each store), decides (decide: what to copy, what the lag is; no I/O) and
// executes (copies inside the store where the destination's credentials can, else streamed; a
// bounded number at once). It never deletes and never overwrites an object that is not older
// than the source's.
package replication

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Source is what a copy needs of the store it copies from: its data plane's listing, reads, and
// how etcd-backup-restore restores from it (objectstore.DataPlane has all three).
type Source interface {
	ListObjects(ctx context.Context, bucket, prefix string, fn func(page []objectstore.ObjectVersion) error) error
	OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error)
	// SnapshotRule says which version of each snapshot key a restore from the bucket reads:
	// the version the copy copies.
	SnapshotRule(ctx context.Context, bucket string) (objectstore.SnapshotRule, error)
}

// Destination is what a copy needs of the store it copies to: its listing and a streaming write.
type Destination interface {
	ListObjects(ctx context.Context, bucket, prefix string, fn func(page []objectstore.ObjectVersion) error) error
	objectstore.StreamWriter
}

// From is the side a copy reads: a store and the bucket in it.
type From struct {
	Store  Source
	Bucket string
}

// To is the side a copy writes: a store and the bucket in it.
type To struct {
	Store  Destination
	Bucket string
	// Copier, when set, is tried to copy each object inside the store (server-side) instead of
	// streaming it through this process: it works only where the source bucket is in the same
	// store (endpoint, account) and the destination's credentials may read it. Objects below
	// Options.ServerSideMinBytes are streamed, never tried. Each pass tries its first larger
	// object alone and copies the rest as that went (decideMode): inside the store, or
	// streamed where the store refused (Result.ServerSideRefused says why).
	Copier objectstore.ServerSideCopier
}

// DefaultParallelism is how many objects a pass copies at once unless told otherwise.
const DefaultParallelism = 4

// Options tune a pass.
type Options struct {
	// Parallelism is how many objects are copied at once (0: DefaultParallelism).
	Parallelism int
	// MaxBufferBytes bounds the memory the destination's writers hold at once for the objects
	// being streamed (each object reserves what objectstore.StreamBuffer states, else its size;
	// at most the whole budget); 0: DefaultMaxBufferBytes. Server-side copies hold none.
	MaxBufferBytes int64
	// Now is the clock the lag is measured with (nil: time.Now).
	Now func() time.Time
	// ServerSideMinBytes is the smallest object copied inside the store where To.Copier is set:
	// smaller ones are streamed, never tried (wayOf). 0: DefaultServerSideMinBytes; negative:
	// every object may be copied inside.
	ServerSideMinBytes int64
	// Deadline, when positive, is how long the pass starts objects: its listings, its copies
	// inside the store and every object not begun by then end with it (cut off: Failed, in the
	// lag). A streamed object being written at the deadline goes on while its bytes flow and
	// commits only where Guard allows it, then within Deadline of Guard's look, else it is
	// aborted (gate). So every write of the pass commits within Deadline of the pass's
	// start or of a look of Guard that allowed it. The caller's ctx still ends everything.
	Deadline time.Duration
	// Guard is asked, past the deadline, whether a streamed object may still commit: once for
	// each object being written at the deadline, when the source is read to its end (or at the
	// deadline where it was already). An error refuses: the write is aborted and the object
	// fails with ErrCommitRefused. Nil: nothing goes past the deadline (every write is cut off at
	// it, as by a deadline of the caller's ctx).
	Guard func(ctx context.Context) error
	// Overtime, when set, is told of each streamed object still being written at the deadline
	// (with a Guard: without one, none is).
	Overtime func(o objectstore.ObjectVersion)
	// KeepDestinationChain keeps the chain of snapshots the destination's own writer wrote (a
	// reverse pass once etcd-backup-restore writes the destination again): a source snapshot
	// the destination lacks whose revisions reach that chain's start is not copied but reported
	// in Plan.Superseded, so that a restore from the destination never meets two deltas of the
	// same revisions (etcd-backup-restore's restore fails on them). See supersededFrom. Only for
	// a pass after the destination holds the source's newest snapshots: before, a snapshot only
	// the destination holds beyond those (history, no writer's) would keep the source's out.
	KeepDestinationChain bool
	// OvertimeSlot, when set, is asked once, when the deadline passes with a streamed object
	// of the pass in flight, whether the pass may go on past it (a caller's cap on the passes
	// in overtime at once): ok, its objects go on (Guard), and release is called when the pass
	// ends; not ok, they are cut off at the deadline as without a Guard. Nil: always ok.
	OvertimeSlot func() (release func(), ok bool)
}

// Result is the outcome of one pass.
type Result struct {
	// Plan is what the pass decided from its listings.
	Plan Plan
	// Copied and Bytes count what was written to the destination.
	Copied int
	Bytes  int64
	// Vanished counts snapshots the source no longer had when they were read (deleted by
	// etcd-backup-restore's garbage collection since the listing).
	Vanished int
	// Failed are the snapshots that were not copied, each with its classified error.
	Failed []objectstore.ObjectError
	// WriteConflicts are the snapshots not written because the destination's key changed
	// between the listing and the write (a conditional write's precondition failed; or, for a
	// server-side copy, the source's version changed): like Plan.Conflicts never overwritten and
	// in the lag; the next pass decides again.
	WriteConflicts []objectstore.ObjectVersion
	// PeakBufferBytes is the most the pass reserved of its byte budget at once (the writers'
	// stated buffers of the objects streamed together).
	PeakBufferBytes int64
	// Unguarded counts the writes made without a condition, because the destination store (or
	// its Copier) has no conditional variant (objectstore.ConditionalWriter,
	// objectstore.ConditionalCopier) or does not enforce the write's kind of condition
	// (objectstore.PartialWriteGuard, PartialCopyGuard: Swift replaces a version unguarded): an object written there
	// meanwhile may have been replaced.
	Unguarded int
	// Lag is the age, at the end of the pass, of the oldest source snapshot still not in the
	// destination (failed or in conflict); 0 when the destination is caught up.
	Lag time.Duration

	// ServerSide counts the objects of Copied copied inside the store (To.Copier), Streamed
	// those streamed through this process.
	ServerSide, Streamed int
	// StreamedBytes are the bytes of Bytes streamed through this process (read from the source
	// and written to the destination); the rest moved inside the store.
	StreamedBytes int64
	// ServerSideRefused is why the pass streamed although To.Copier was set: the store's
	// refusal of the server-side copy it tried first (for example ErrForbidden: the destination's
	// credentials may not read the source bucket; ErrBucketNotFound: the source bucket is not
	// in the destination's store). Nil when server-side copies worked, were not tried or not
	// offered.
	ServerSideRefused error
}

// Done reports whether the destination held every snapshot of the source when the pass ended.
func (r Result) Done() bool {
	return len(r.Failed) == 0 && len(r.Plan.Conflicts) == 0 && len(r.WriteConflicts) == 0
}

// Copy makes the destination hold every current snapshot of the source under prefix (an entry's
// `<entry>/`), under the same keys, in one pass. A failed listing returns its error (a
// *SideError naming the store) and no result; failed copies are in Result.Failed, and the error is then the first of them (wrapped,
// so that errors.Is sees the store's sentinels): a pass whose copies failed never returns nil.
// A conflict (the destination's differing, newer object, kept; or one written there between the
// listing and the write, which a conditional write refuses) is no error of the pass: the caller
// reads Result.Done and Result.Lag, which count it.
func Copy(ctx context.Context, src From, dst To, prefix objectstore.Prefix, opts Options) (Result, error) {
	if err := prefix.Validate(); err != nil {
		return Result{}, err
	}
	if prefix.IsWholeBucket() {
		return Result{}, objectstore.Invalidf("a copy is of one entry's prefix, not of a whole bucket")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	sp, cancel := newSpan(ctx, opts)
	defer cancel()
	obs, err := observe(sp.start, src, dst, prefix)
	if err != nil {
		return Result{}, err
	}
	res := Result{Plan: decide(prefix.String(), obs.rule, obs.source, obs.marked, obs.destination, opts.KeepDestinationChain, now())}
	execute(sp, src, dst, obs.rule, res.Plan.Copy, &res)
	var behind []time.Time
	for _, f := range res.Failed {
		behind = append(behind, f.Object.Modified)
	}
	for _, c := range res.Plan.Conflicts {
		behind = append(behind, c.Source.Modified)
	}
	for _, c := range res.WriteConflicts {
		behind = append(behind, c.Modified)
	}
	res.Lag = lag(behind, now())
	if len(res.Failed) > 0 {
		f := res.Failed[0]
		return res, fmt.Errorf("%d of %d snapshots under %s not copied; first %s: %w", len(res.Failed), len(res.Plan.Copy), prefix, f.Object.Key, f.Err)
	}
	return res, nil
}

// observation is what one pass reads before it decides.
type observation struct {
	// rule is the source's SnapshotRule; source every version the source lists under the
	// prefix; marked the exclude marks the rule reads by request (markQuestions).
	rule        objectstore.SnapshotRule
	source      []objectstore.ObjectVersion
	marked      map[versionID]bool
	destination map[string]objectstore.ObjectVersion
}

// observe reads the source's SnapshotRule, lists prefix in both stores (every version of the
// source, the destination's current versions by key) and asks the exclude marks the rule reads by
// request. Any of these failing is returned: the pass cannot tell what a restore reads.
func observe(ctx context.Context, src From, dst To, prefix objectstore.Prefix) (observation, error) {
	var obs observation
	var err error
	if obs.rule, err = src.Store.SnapshotRule(ctx, src.Bucket); err != nil {
		return obs, sideErr(SideSource, fmt.Errorf("reading how etcd-backup-restore restores from the source bucket %s: %w", src.Bucket, err))
	}
	err = list(ctx, src.Store, src.Bucket, prefix, func(o objectstore.ObjectVersion) { obs.source = append(obs.source, o) })
	if err != nil {
		return obs, sideErr(SideSource, fmt.Errorf("listing %s in the source bucket %s: %w", prefix, src.Bucket, err))
	}
	obs.destination = map[string]objectstore.ObjectVersion{}
	err = list(ctx, dst.Store, dst.Bucket, prefix, func(o objectstore.ObjectVersion) {
		if !o.Noncurrent {
			obs.destination[o.Key] = o
		}
	})
	if err != nil {
		return obs, sideErr(SideDestination, fmt.Errorf("listing %s in the destination bucket %s: %w", prefix, dst.Bucket, err))
	}
	questions := markQuestions(prefix.String(), obs.rule, obs.source)
	if len(questions) > 0 && obs.rule.MarkOf == nil {
		return obs, sideErr(SideSource, fmt.Errorf("the snapshot rule %q of the source bucket %s reads exclude marks but has no MarkOf", obs.rule.Source, src.Bucket))
	}
	obs.marked = map[versionID]bool{}
	for _, o := range questions {
		marked, err := obs.rule.MarkOf(ctx, o)
		if err != nil {
			return obs, sideErr(SideSource, fmt.Errorf("reading the exclude mark of %s in the source bucket %s: %w", o.Key, src.Bucket, err))
		}
		obs.marked[versionID{o.Key, o.Version}] = marked
	}
	return obs, nil
}

// Side names one store of a copy.
type Side int

// The sides of a copy.
const (
	// SideSource is the store copied from (From).
	SideSource Side = iota + 1
	// SideDestination is the store copied to (To).
	SideDestination
)

func (s Side) String() string {
	switch s {
	case SideSource:
		return "source"
	case SideDestination:
		return "destination"
	}
	return fmt.Sprintf("Side(%d)", int(s))
}

// SideError is a pass's failure to observe one store (its SnapshotRule, its listing, an exclude
// mark): the caller tells with errors.As which store could not be read. Its message is Err's;
// errors.Is sees through it to the store's sentinels.
type SideError struct {
	Side Side
	Err  error
}

func (e *SideError) Error() string { return e.Err.Error() }
func (e *SideError) Unwrap() error { return e.Err }

func sideErr(side Side, err error) error { return &SideError{Side: side, Err: err} }

type lister interface {
	ListObjects(ctx context.Context, bucket, prefix string, fn func(page []objectstore.ObjectVersion) error) error
}

// list streams one listing of prefix and hands keep each version. A key outside prefix stops
// the listing: a store that mis-lists must not make a copy write elsewhere.
func list(ctx context.Context, store lister, bucket string, prefix objectstore.Prefix, keep func(objectstore.ObjectVersion)) error {
	return store.ListObjects(objectstore.WithOperation(ctx, objectstore.OpListObjects), bucket, prefix.String(), func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			if !prefix.Contains(o.Key) {
				return fmt.Errorf("the listing of %s returned %q, which lies outside it", prefix, o.Key)
			}
			keep(o)
		}
		return nil
	})
}

// execute copies objects in order, at most opts.Parallelism at once and within its byte budget,
// and records each outcome in res. Where dst has a Copier, objects of at least the threshold
// (wayOf) are tried server-side one at a time until one tells how the rest of the pass copies
// (decideMode); then they run at once. Smaller objects are streamed among them; a try waits
// for those in flight. The deadline (sp.start) ends the start of objects, not a streamed one
// begun before it (gate).
func execute(sp span, src From, dst To, rule objectstore.SnapshotRule, objects []objectstore.ObjectVersion, res *Result) {
	opts := sp.opts
	parallelism := opts.Parallelism
	if parallelism < 1 {
		parallelism = DefaultParallelism
	}
	total := opts.MaxBufferBytes
	if total <= 0 {
		total = DefaultMaxBufferBytes
	}
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		sem   = make(chan struct{}, parallelism)
		reads = newReadAhead(parallelism) // prefetches (prefetched) in flight or waiting for sem
		bytes = newBudget(total)
		m     = modeStream
		// minInside: smaller objects are streamed whatever the mode (wayOf).
		minInside = serverSideMin(opts)
	)
	if dst.Copier != nil {
		m = modeUndecided
	}
	defer func() { res.PeakBufferBytes = bytes.peak }()
	for _, o := range objects {
		cond := objectstore.Precondition{}
		if d, ok := res.Plan.Overwrites[o.Key]; ok {
			cond.Replaces = &d
		}
		forGuard := streamsForGuard(guardsOf(dst, cond))
		w := wayOf(m, o.Size, minInside, forGuard)
		if w == wayTry {
			// Alone: nothing else runs while the store is asked whether it copies inside (the
			// smaller objects streamed meanwhile end first; try records into res unlocked).
			wg.Wait()
			m = try(sp, src, dst, rule, o, cond, forGuard, bytes, res)
			continue
		}
		server := w == wayServer
		// A prefetch holds its read slot and its budget while it waits for a write slot: the
		// loop takes a write slot only after the budget, so that it never holds one while
		// waiting for budget such a prefetch holds.
		ahead := prefetches(server, o)
		if ahead {
			reads.acquire()
		}
		held := bytes.acquire(bufferOf(dst, o, server))
		if !ahead {
			sem <- struct{}{}
		}
		wg.Go(func() {
			var body io.ReadCloser
			var readErr error
			if ahead {
				body, readErr = prefetched(sp.start, src, rule, o)
				sem <- struct{}{}
				reads.release()
			}
			defer func() { <-sem }()
			defer bytes.release(held)
			guarded, err := true, readErr
			switch {
			case err != nil:
			case server:
				guarded, err = copyInside(sp.start, src, dst, o, cond)
			default:
				guarded, err = stream(sp, src, dst, rule, o, cond, body)
			}
			mu.Lock()
			defer mu.Unlock()
			res.record(o, guarded, err, server)
		})
	}
	wg.Wait()
}

// try copies o server-side and, where the store refused or could not tell (streamsAfter),
// streams it instead; it records the outcome and returns how the rest of the pass copies. An
// object streamed for its guard (forGuard, streamsForGuard) is not tried inside and decides
// nothing.
func try(sp span, src From, dst To, rule objectstore.SnapshotRule, o objectstore.ObjectVersion, cond objectstore.Precondition, forGuard bool, bytes *budget, res *Result) mode {
	if forGuard {
		_ = streamAlone(sp, src, dst, rule, o, cond, bytes, res) // recorded; it decides nothing
		return modeUndecided
	}
	guarded, err := copyInside(sp.start, src, dst, o, cond)
	a := classifyAttempt(err)
	if !streamsAfter(a) {
		res.record(o, guarded, err, true)
		return decideMode(a, notStreamed)
	}
	serr := streamAlone(sp, src, dst, rule, o, cond, bytes, res)
	next := decideMode(a, classifyStream(serr))
	if next == modeStream && res.ServerSideRefused == nil {
		res.ServerSideRefused = err
	}
	return next
}

// streamAlone streams o while nothing else of the pass runs (try) and records the outcome.
func streamAlone(sp span, src From, dst To, rule objectstore.SnapshotRule, o objectstore.ObjectVersion, cond objectstore.Precondition, bytes *budget, res *Result) error {
	held := bytes.acquire(bufferOf(dst, o, false))
	guarded, err := stream(sp, src, dst, rule, o, cond, nil)
	bytes.release(held)
	res.record(o, guarded, err, false)
	return err
}

// guardsOf reports whether dst's conditional Copier declares it cannot guard cond in a copy
// inside the store (objectstore.PartialCopyGuard), and whether its Store guards cond in a
// streamed write. A Copier without conditions (every provider's has them) declares nothing: its
// copies are counted unguarded (copyInside).
func guardsOf(dst To, cond objectstore.Precondition) (insideDeclined, streamed bool) {
	if c, ok := dst.Copier.(objectstore.ConditionalCopier); ok {
		insideDeclined = !objectstore.CopyGuarded(c, cond)
	}
	if w, ok := dst.Store.(objectstore.ConditionalWriter); ok {
		streamed = objectstore.WriteGuarded(w, cond)
	}
	return insideDeclined, streamed
}

// record counts one object's outcome: copied (server-side or streamed), vanished, refused by a
// condition, or failed.
func (r *Result) record(o objectstore.ObjectVersion, guarded bool, err error, server bool) {
	if !guarded {
		r.Unguarded++
	}
	switch {
	case err == nil:
		r.Copied++
		r.Bytes += o.Size
		if server {
			r.ServerSide++
		} else {
			r.Streamed++
			r.StreamedBytes += o.Size
		}
	case errors.Is(err, errVanished):
		r.Vanished++
	case errors.Is(err, objectstore.ErrPreconditionFailed):
		r.WriteConflicts = append(r.WriteConflicts, o)
	default:
		r.Failed = append(r.Failed, objectstore.ObjectError{Object: o, Err: err})
	}
}

// errVanished marks a source object that was gone when it was read.
var errVanished = errors.New("gone from the source")

// copyInside copies the listed version o inside the store with dst's Copier, conditioned on cond
// (the destination's key as listed) where the Copier can, which guarded says.
func copyInside(ctx context.Context, src From, dst To, o objectstore.ObjectVersion, cond objectstore.Precondition) (guarded bool, err error) {
	if err := ctx.Err(); err != nil {
		return true, err
	}
	ctx = objectstore.WithOperation(ctx, objectstore.OpCopyObject)
	if c, ok := dst.Copier.(objectstore.ConditionalCopier); ok && objectstore.CopyGuarded(c, cond) {
		guarded, err = true, c.CopyObjectIf(ctx, src.Bucket, o, dst.Bucket, o.Key, cond)
	} else {
		err = dst.Copier.CopyObject(ctx, src.Bucket, o, dst.Bucket, o.Key)
	}
	if errors.Is(err, objectstore.ErrNotFound) {
		return guarded, fmt.Errorf("%w: %w", errVanished, err)
	}
	return guarded, err
}

// stream copies one object through this process, the version a restore from the source reads
// (by its ID where the rule says so, else by name): from body where it was prefetched, else read
// now; conditioned on cond where the destination can, which guarded says. It begins only before
// the pass's deadline (sp.start) and then goes on under sp.run, its commit guarded past the
// deadline (gate).
func stream(sp span, src From, dst To, rule objectstore.SnapshotRule, o objectstore.ObjectVersion, cond objectstore.Precondition, body io.ReadCloser) (guarded bool, err error) {
	if body != nil {
		defer body.Close()
	}
	if err := sp.start.Err(); err != nil {
		return true, err
	}
	ctx, cancel := context.WithCancelCause(sp.run)
	defer cancel(nil)
	g := newGate(sp, o, cancel)
	defer g.stop()
	r := body
	if r == nil {
		if r, err = openSource(ctx, src, rule, o); err != nil {
			return true, err
		}
		defer r.Close()
	}
	gated := &gatedBody{r: r, g: g}
	wctx := objectstore.WithOperation(ctx, objectstore.OpPutObject)
	if w, ok := dst.Store.(objectstore.ConditionalWriter); ok && objectstore.WriteGuarded(w, cond) {
		guarded, err = true, w.PutObjectStreamIf(wctx, dst.Bucket, o.Key, gated, o.Size, cond)
	} else {
		err = dst.Store.PutObjectStream(wctx, dst.Bucket, o.Key, gated, o.Size)
	}
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
			err = fmt.Errorf("%w: %w", cause, err) // the gate cancelled the write
		}
		return guarded, fmt.Errorf("writing to the destination: %w", err)
	}
	return guarded, nil
}

// openSource opens the version of o a restore from the source reads (by its ID where the rule
// says so, else by name); errVanished where it is gone.
func openSource(ctx context.Context, src From, rule objectstore.SnapshotRule, o objectstore.ObjectVersion) (io.ReadCloser, error) {
	version := ""
	if rule.ReadsListedVersion {
		version = o.Version
	}
	r, err := src.Store.OpenObject(objectstore.WithOperation(ctx, objectstore.OpOpenObject), src.Bucket, o.Key, version)
	if errors.Is(err, objectstore.ErrNotFound) {
		return nil, errVanished
	}
	if err != nil {
		return nil, fmt.Errorf("reading from the source: %w", err)
	}
	return r, nil
}

// PrefetchMaxBytes is the largest object a streamed copy reads whole before it takes one of the
// Parallelism write slots: its read overlaps the writes in flight, so that a pass of many small
// snapshots (deltas) is not a read and a write one after the other per object (each store still
// sees at most Parallelism requests of the pass at once). At most Parallelism are read ahead at
// once, started in batches (readAhead). Larger objects stream from the read into the write.
const PrefetchMaxBytes = 1 << 20

// prefetches reports whether o is read whole ahead of its write (PrefetchMaxBytes): never for a
// copy inside the store (server), which reads nothing.
func prefetches(server bool, o objectstore.ObjectVersion) bool {
	return !server && o.Size <= PrefetchMaxBytes
}

// prefetched is o read whole from the source (openSource's errors; a read cut off is an error).
func prefetched(ctx context.Context, src From, rule objectstore.SnapshotRule, o objectstore.ObjectVersion) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := openSource(ctx, src, rule, o)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := readWhole(r, o.Size)
	if err != nil {
		return nil, fmt.Errorf("reading from the source: %w", err)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// readWhole reads r to its end, at most PrefetchMaxBytes+1 bytes (the writer's size check refuses
// more), into one buffer of the listed size: io.ReadAll's doubling from 512 bytes would allocate
// and copy about twice each small object.
func readWhole(r io.Reader, size int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(size, PrefetchMaxBytes)+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(r, PrefetchMaxBytes+1))
	return buf.Bytes(), err
}
