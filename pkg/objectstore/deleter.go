// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"
)

// DeleteOptions tunes DeletePrefix. The zero value is usable.
type DeleteOptions struct {
	// Parallelism is the most DeleteObjects requests in flight at once (default 8). Under
	// throttling the engine lowers it by itself and raises it again as requests succeed.
	Parallelism int
	// Deadline, when set, is when the engine stops starting new requests and returns with
	// Result.Done false, so that a caller bound by a reconcile timeout can return in time and
	// resume later: everything deleted so far stays deleted.
	Deadline time.Time
	// Cutoff, when set, is when requests still in flight are abandoned: their objects are left
	// for the next pass, never counted as failures, and the caller keeps the time after Cutoff
	// to report the pass (a status write) before its own context ends.
	Cutoff time.Time
	// MaxThrottleWait caps one back-off pause after throttling (default 10s).
	MaxThrottleWait time.Duration
	// Budget, when set, bounds the requests in flight of every deletion that shares it on top
	// of Parallelism (see SharedBudget): many small prefixes deleted at once then keep the
	// store's requests in flight at the budget's level.
	Budget *Budget
}

// DeleteResult is what one DeletePrefix pass did.
type DeleteResult struct {
	// Deleted counts deleted object versions (including delete markers).
	Deleted int
	// Locked counts object versions held by a retention lock or legal hold; they are left alone.
	Locked int
	// EarliestRetainUntil and LatestRetainUntil are the soonest and the last lock expiry among
	// Locked (zero if unknown or none; a legal hold has no expiry).
	EarliestRetainUntil, LatestRetainUntil time.Time
	// Throttled counts requests the store throttled (and the engine retried).
	Throttled int
	// Unsettled counts the object versions this pass listed and neither deleted, found gone nor
	// counted in Locked: a lower bound of what is left while the listing is unfinished.
	Unsettled int
	// Done is true only when a listing was exhausted and every object version it listed was
	// confirmed deleted, already gone, or counted in Locked, and that listing came after the
	// last deletion (a pass that deleted nothing): nothing deletable is left under the prefix.
	// It is derived from those counts at the end of a pass, never set on a path.
	Done bool
}

// ErrOutsidePrefix is returned when a store lists a key outside the requested prefix; the engine
// then stops without deleting that key, because a store that mis-lists cannot be trusted.
var ErrOutsidePrefix = errors.New("store listed a key outside the requested prefix")

const (
	defaultParallelism     = 8
	defaultMaxThrottleWait = 10 * time.Second
	// maxReportedErrors bounds how many per-object failures an error message names.
	maxReportedErrors = 5
	// minSplitBatch is the smallest batch the listing's last objects are split into, so that a
	// short prefix is deleted with its parallelism, without requests of a few keys each.
	minSplitBatch = 50
	// maxVerifyingPasses bounds the passes after the first in one DeletePrefix call: a listing
	// that keeps showing objects already deleted ends the call with Done false instead of
	// spinning against the store.
	maxVerifyingPasses = 3
)

// DeletePrefix deletes every object version under prefix in bucket: it streams the listing,
// groups it into batches of store.MaxDeleteBatch(), runs the batches with bounded parallelism,
// checks every per-object result, retries what the store throttled (slowing down instead of
// failing), counts what retention locks hold, and stops at opts.Deadline with Done false.
// A failure of any other kind stops the pass and is returned, wrapping the sentinel of its cause.
// A pass that deleted anything is followed by another, so that Done rests on a listing that
// found nothing left to delete (a store whose listing lags, such as Swift's under load, shows a
// late object then): at most maxVerifyingPasses in one call, after which Done is false and the
// caller's next call goes on.
func DeletePrefix(ctx context.Context, store DataPlane, bucket string, prefix Prefix, opts DeleteOptions) (DeleteResult, error) {
	var total DeleteResult
	for pass := 0; ; pass++ {
		res, err := deletePass(ctx, store, bucket, prefix, opts)
		total = total.then(res)
		if err != nil || !res.Done || res.Deleted == 0 {
			return total, err
		}
		if pass == maxVerifyingPasses {
			total.Done = false
			return total, nil
		}
	}
}

// then is r followed by the pass next: the counts of work done add up, while what is left
// (Locked, its lock span, Unsettled, Done) is the later pass's, which listed again.
func (r DeleteResult) then(next DeleteResult) DeleteResult {
	next.Deleted += r.Deleted
	next.Throttled += r.Throttled
	return next
}

// deletePass is one listing of prefix and the deletion of what it listed (DeletePrefix).
func deletePass(ctx context.Context, store DataPlane, bucket string, prefix Prefix, opts DeleteOptions) (DeleteResult, error) {
	if err := prefix.Validate(); err != nil {
		return DeleteResult{}, err
	}
	if bucket == "" {
		return DeleteResult{}, fmt.Errorf("%w: empty bucket name", ErrInvalidConfig)
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = defaultParallelism
	}
	if opts.MaxThrottleWait <= 0 {
		opts.MaxThrottleWait = defaultMaxThrottleWait
	}
	batchSize := store.MaxDeleteBatch()
	if batchSize <= 0 {
		return DeleteResult{}, fmt.Errorf("store reports an invalid batch size %d", batchSize)
	}

	if !opts.Cutoff.IsZero() {
		var stop context.CancelFunc
		ctx, stop = context.WithDeadline(ctx, opts.Cutoff)
		defer stop()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	run := &deletion{
		store:   store,
		bucket:  bucket,
		opts:    opts,
		limiter: newAdaptiveLimiter(opts.Parallelism),
		cancel:  cancel,
	}
	batches := make(chan []ObjectVersion, opts.Parallelism)

	var workers sync.WaitGroup
	for range opts.Parallelism {
		workers.Go(func() {
			for batch := range batches {
				if ctx.Err() != nil {
					continue // drain: a failure elsewhere already stopped the pass
				}
				run.deleteBatch(ctx, batch)
			}
		})
	}

	listErr := run.produce(ctx, prefix, batchSize, batches)
	close(batches)
	workers.Wait()

	run.mu.Lock()
	defer run.mu.Unlock()
	res := run.result
	res.Unsettled = run.listed - run.settled
	switch {
	case run.failure != nil:
		return res, run.failure
	case errors.Is(listErr, ErrBucketNotFound):
		res.Done = true // nothing can be left in a bucket that does not exist
		return res, nil
	case listErr != nil && !errors.Is(listErr, errBudgetSpent):
		return res, fmt.Errorf("listing %q in bucket %q: %w", prefix.String(), bucket, listErr)
	}
	// Every way a pass can end early (the budget, the cutoff, a batch still queued, waiting for
	// the limiter or pausing after throttling) leaves some listed version unsettled, so the
	// counts alone decide; a pass whose context ended is not trusted to have listed everything.
	res.Done = listErr == nil && ctx.Err() == nil && run.settled == run.listed
	return res, nil
}

var errBudgetSpent = errors.New("time budget spent")

type deletion struct {
	store   DataPlane
	bucket  string
	opts    DeleteOptions
	limiter *adaptiveLimiter
	cancel  context.CancelCauseFunc

	// listed counts the object versions the listing produced (written by produce only).
	listed int

	mu      sync.Mutex
	result  DeleteResult
	failure error
	// settled counts the listed versions confirmed deleted, already gone, or locked.
	settled int
}

// produce streams the listing into batches, refusing any key outside the prefix. It holds up to
// two batches: a full batch is sent only once the listing has produced a second one, so that the
// last objects of the listing (all of them for a short prefix: one page) are split across the
// engine's parallelism instead of going out as one large batch and a small one.
func (d *deletion) produce(ctx context.Context, prefix Prefix, batchSize int, out chan<- []ObjectVersion) error {
	pending := make([]ObjectVersion, 0, 2*batchSize)
	send := func(batch []ObjectVersion) error {
		if d.budgetSpent() {
			return errBudgetSpent
		}
		select {
		case out <- batch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		return nil
	}
	err := d.store.ListObjects(namedUnlessNamed(ctx, OpListObjects), d.bucket, prefix.String(), func(page []ObjectVersion) error {
		for _, obj := range page {
			if !prefix.Contains(obj.Key) {
				return fmt.Errorf("%w: %q is not under %q", ErrOutsidePrefix, obj.Key, prefix.String())
			}
			pending = append(pending, obj)
			d.listed++
			if len(pending) == 2*batchSize {
				if err := send(pending[:batchSize:batchSize]); err != nil {
					return err
				}
				pending = append(make([]ObjectVersion, 0, 2*batchSize), pending[batchSize:]...)
			}
		}
		return nil
	})
	if err == nil {
		for _, batch := range splitBatches(pending, batchSize, d.opts.Parallelism) {
			if err = send(batch); err != nil {
				break
			}
		}
	}
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil && !errors.Is(err, errBudgetSpent) {
			if errors.Is(cause, context.DeadlineExceeded) {
				// The caller's deadline (the reconcile timeout) came before the engine's own:
				// what was deleted stays deleted, the rest is for the next pass.
				return errBudgetSpent
			}
			d.fail(cause)
			return nil
		}
		if errors.Is(err, ErrOutsidePrefix) {
			d.fail(err)
			return nil
		}
	}
	return err
}

// splitBatches splits the listing's last objects into as many near-equal batches as the
// parallelism allows, none larger than batchSize and none smaller than minSplitBatch (unless
// there are fewer objects than that).
func splitBatches(objs []ObjectVersion, batchSize, parallelism int) [][]ObjectVersion {
	if len(objs) == 0 {
		return nil
	}
	n := min(parallelism, len(objs)/minSplitBatch)
	n = max(n, (len(objs)+batchSize-1)/batchSize, 1)
	batches := make([][]ObjectVersion, 0, n)
	for i := range n {
		lo, hi := i*len(objs)/n, (i+1)*len(objs)/n
		batches = append(batches, objs[lo:hi:hi])
	}
	return batches
}

func (d *deletion) budgetSpent() bool {
	return !d.opts.Deadline.IsZero() && time.Now().After(d.opts.Deadline)
}

// deleteBatch deletes one batch, retrying throttled requests and throttled objects until they
// succeed, the context ends or the budget is spent. Only what it confirms is counted as settled:
// whatever it returns early with stays unsettled, so the pass is not done and the next pass
// lists it again.
func (d *deletion) deleteBatch(ctx context.Context, batch []ObjectVersion) {
	for attempt := 0; len(batch) > 0; attempt++ {
		if err := d.limiter.acquire(ctx); err != nil {
			return
		}
		if err := d.opts.Budget.acquire(ctx); err != nil {
			d.limiter.cancel()
			return
		}
		objErrs, err := d.store.DeleteObjects(WithOperation(ctx, OpDeleteObjects), d.bucket, batch)
		d.opts.Budget.release()
		d.limiter.release(err == nil && !anyThrottled(objErrs))

		if err != nil {
			if errors.Is(err, ErrThrottled) {
				d.countThrottle()
				if d.budgetSpent() {
					return
				}
				d.pause(ctx, err, attempt)
				continue
			}
			if ctx.Err() != nil {
				// Cut off by the deadline or stopped by a failure elsewhere: these objects were
				// not confirmed deleted; the next pass lists them.
				return
			}
			d.fail(fmt.Errorf("deleting %d objects from bucket %q: %w", len(batch), d.bucket, err))
			return
		}

		var retry []ObjectVersion
		var failed []ObjectError
		var throttledBy error // the throttling error asking for the longest wait
		locked, earliest, latest, cutOff := 0, time.Time{}, time.Time{}, 0
		for _, oe := range objErrs {
			var le *LockedError
			switch {
			case ctx.Err() != nil && (errors.Is(oe.Err, context.DeadlineExceeded) || errors.Is(oe.Err, context.Canceled)):
				// The caller's own context ended while this object's request was in flight
				// (the reconcile timeout): not deleted, not a failure; the next pass lists it.
				cutOff++
			case errors.As(oe.Err, &le):
				locked++
				if !le.RetainUntil.IsZero() && (earliest.IsZero() || le.RetainUntil.Before(earliest)) {
					earliest = le.RetainUntil
				}
				if le.RetainUntil.After(latest) {
					latest = le.RetainUntil
				}
			case errors.Is(oe.Err, ErrObjectLocked):
				locked++
			case errors.Is(oe.Err, ErrNotFound):
				// already gone: deleted as far as we are concerned
			case errors.Is(oe.Err, ErrThrottled):
				retry = append(retry, oe.Object)
				if throttledBy == nil || retryAfter(oe.Err) > retryAfter(throttledBy) {
					throttledBy = oe.Err
				}
			default:
				failed = append(failed, oe)
			}
		}
		deleted := len(batch) - len(retry) - len(failed) - locked - cutOff
		d.mu.Lock()
		d.result.Deleted += deleted
		d.settled += deleted + locked
		d.result.Locked += locked
		if !earliest.IsZero() && (d.result.EarliestRetainUntil.IsZero() || earliest.Before(d.result.EarliestRetainUntil)) {
			d.result.EarliestRetainUntil = earliest
		}
		if latest.After(d.result.LatestRetainUntil) {
			d.result.LatestRetainUntil = latest
		}
		d.mu.Unlock()

		if len(failed) > 0 {
			d.fail(objectErrors(d.bucket, failed))
			return
		}
		if len(retry) > 0 {
			d.countThrottle()
			if d.budgetSpent() {
				return
			}
			d.pause(ctx, throttledBy, attempt)
		}
		batch = retry
	}
}

func anyThrottled(errs []ObjectError) bool {
	for _, oe := range errs {
		if errors.Is(oe.Err, ErrThrottled) {
			return true
		}
	}
	return false
}

func (d *deletion) countThrottle() {
	d.mu.Lock()
	d.result.Throttled++
	d.mu.Unlock()
}

// pause backs off exponentially with jitter, honouring a delay the store asked for.
func (d *deletion) pause(ctx context.Context, cause error, attempt int) {
	wait := max(time.Duration(100<<min(attempt, 7))*time.Millisecond, retryAfter(cause))
	wait = min(wait, d.opts.MaxThrottleWait)
	wait = wait/2 + rand.N(wait/2+1)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// retryAfter is the delay a throttling error asks for, zero if it names none.
func retryAfter(err error) time.Duration {
	var ra *RetryAfterError
	if errors.As(err, &ra) {
		return ra.After
	}
	return 0
}

// fail records the first failure and stops the pass.
func (d *deletion) fail(err error) {
	d.mu.Lock()
	if d.failure == nil {
		d.failure = err
	}
	d.mu.Unlock()
	d.cancel(err)
}

// objectErrors summarises per-object failures in one error that wraps the first one's cause, so
// that its class (forbidden, unauthenticated, ...) survives for the error-code mapping.
func objectErrors(bucket string, failed []ObjectError) error {
	sort.Slice(failed, func(i, j int) bool { return failed[i].Object.Key < failed[j].Object.Key })
	var b strings.Builder
	for i, oe := range failed {
		if i == maxReportedErrors {
			fmt.Fprintf(&b, "; and %d more", len(failed)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %v", oe.Object.Key, oe.Err)
	}
	return fmt.Errorf("%d objects in bucket %q could not be deleted (%s): %w", len(failed), bucket, b.String(), failed[0].Err)
}
