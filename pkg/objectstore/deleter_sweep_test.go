// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// faultyStore injects latency, throttling (of whole requests and of single objects, with a
// Retry-After), objects reported gone, and failures into a memstore's deletions.
type faultyStore struct {
	*memstore.Store
	faults

	mu  sync.Mutex
	rnd *rand.Rand
}

type faults struct {
	latency       time.Duration
	retryAfter    time.Duration
	throttleWhole float64 // share of requests throttled as a whole
	throttleObj   float64 // share of objects throttled one by one
	fail          float64 // share of requests failing with a non-retryable error
}

var errInjected = errors.New("injected failure")

func (s *faultyStore) roll(p float64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rnd.Float64() < p
}

func (s *faultyStore) DeleteObjects(ctx context.Context, bucket string, objs []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	if s.latency > 0 {
		t := time.NewTimer(s.latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	switch {
	case s.roll(s.fail):
		return nil, errInjected
	case s.roll(s.throttleWhole):
		return nil, &objectstore.RetryAfterError{After: s.retryAfter, Cause: errors.New("slow down")}
	}
	var keep, throttled []objectstore.ObjectVersion
	for _, o := range objs {
		if s.roll(s.throttleObj) {
			throttled = append(throttled, o)
		} else {
			keep = append(keep, o)
		}
	}
	errs, err := s.Store.DeleteObjects(ctx, bucket, keep)
	if err != nil {
		return nil, err
	}
	for _, o := range throttled {
		errs = append(errs, objectstore.ObjectError{Object: o, Err: &objectstore.RetryAfterError{After: s.retryAfter, Cause: errors.New("slow down")}})
	}
	return errs, nil
}

// TestDoneNeverWithAnythingLeft sweeps faults and cutoffs from none to beyond the throttle wait:
// a pass may end early, but it is never Done while anything is left under the prefix, and
// passes with time enough finish the deletion without touching the neighbour.
func TestDoneNeverWithAnythingLeft(t *testing.T) {
	const maxThrottleWait = 40 * time.Millisecond
	cases := []struct {
		name   string
		faults faults
	}{
		{"clean", faults{}},
		{"latency", faults{latency: 3 * time.Millisecond}},
		{"whole requests throttled", faults{throttleWhole: 0.5, retryAfter: maxThrottleWait}},
		{"objects throttled", faults{throttleObj: 0.3, retryAfter: maxThrottleWait}},
		{"everything throttled", faults{throttleWhole: 0.3, throttleObj: 0.3, latency: time.Millisecond, retryAfter: 2 * maxThrottleWait}},
		{"failures", faults{fail: 0.2, throttleObj: 0.2, retryAfter: maxThrottleWait}},
	}
	cutoffs := []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, maxThrottleWait, 3 * maxThrottleWait}
	// 5 objects: one batch, the listing ends at once; 25: more batches than workers, the
	// listing ends while batches queue; 120: the listing itself waits for the workers.
	for _, objects := range []int{5, 25, 120} {
		for fi, f := range cases {
			for ci, cutoff := range cutoffs {
				for _, withDeadline := range []bool{false, true} {
					t.Run(fmt.Sprintf("%d objects/%s/cutoff=%s/deadline=%v", objects, f.name, cutoff, withDeadline), func(t *testing.T) {
						mem := memstore.New(10)
						fill(t, mem, "n--1/", objects)
						store := &faultyStore{Store: mem, faults: f.faults, rnd: rand.New(rand.NewPCG(uint64(fi), uint64(ci)))}
						prefix, _ := objectstore.EntryPrefix("n--1")
						check := func(pass int, res objectstore.DeleteResult, err error) {
							t.Helper()
							left, lerr := conformance.ListKeys(context.Background(), mem, "b", "n--1/")
							if lerr != nil {
								t.Fatal(lerr)
							}
							if res.Done && len(left) > 0 {
								t.Fatalf("pass %d reported Done with %d objects left (result %+v, err %v)", pass, len(left), res, err)
							}
							if err != nil && !errors.Is(err, errInjected) {
								t.Fatalf("pass %d: unexpected error %v", pass, err)
							}
						}

						// The swept pass: cut off early, perhaps before the throttle wait ends.
						now := time.Now()
						opts := objectstore.DeleteOptions{Parallelism: 3, MaxThrottleWait: maxThrottleWait, Cutoff: now.Add(cutoff)}
						if withDeadline {
							opts.Deadline = now.Add(cutoff / 2)
						}
						res, err := objectstore.DeletePrefix(context.Background(), store, "b", prefix, opts)
						check(0, res, err)

						// Then passes with time enough (failures aside) finish it.
						for pass := 1; !res.Done; pass++ {
							if pass > 50 {
								t.Fatalf("not done after %d passes", pass-1)
							}
							now := time.Now()
							res, err = objectstore.DeletePrefix(context.Background(), store, "b", prefix, objectstore.DeleteOptions{
								Parallelism: 3, MaxThrottleWait: maxThrottleWait, Deadline: now.Add(2 * time.Second), Cutoff: now.Add(3 * time.Second)})
							check(pass, res, err)
						}
						if left, _ := conformance.ListKeys(context.Background(), mem, "b", ""); len(left) != 1 || left[0] != "neighbour--10/keep" {
							t.Fatalf("after the deletion the bucket holds %v; want only the neighbour", left)
						}
					})
				}
			}
		}
	}
}

// TestThrottlingPauseHonoursTheLongestRetryAfter: when several objects of a batch are throttled,
// the pause honours the longest delay any of them asked for, not the first one's.
func TestThrottlingPauseHonoursTheLongestRetryAfter(t *testing.T) {
	mem := memstore.New(10)
	fill(t, mem, "n--1/", 2)
	prefix, _ := objectstore.EntryPrefix("n--1")
	store := &orderedThrottleStore{Store: mem, waits: []time.Duration{time.Millisecond, 300 * time.Millisecond}}
	start := time.Now()
	res, err := objectstore.DeletePrefix(context.Background(), store, "b", prefix, objectstore.DeleteOptions{MaxThrottleWait: time.Second})
	if err != nil || !res.Done {
		t.Fatalf("got %+v, %v", res, err)
	}
	// The pause is drawn from [wait/2, wait]: at least 150 ms when the longest delay counts.
	if got := store.secondCall.Sub(start); got < 150*time.Millisecond {
		t.Fatalf("retried after %s; want the longest Retry-After (300ms, jittered down to at most half) honoured", got)
	}
}

// orderedThrottleStore throttles the objects of its first request, each with its own delay.
type orderedThrottleStore struct {
	*memstore.Store

	waits      []time.Duration
	calls      int
	secondCall time.Time
}

func (s *orderedThrottleStore) DeleteObjects(ctx context.Context, bucket string, objs []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	s.calls++
	if s.calls == 1 {
		errs := make([]objectstore.ObjectError, len(objs))
		for i, o := range objs {
			errs[i] = objectstore.ObjectError{Object: o, Err: &objectstore.RetryAfterError{After: s.waits[i%len(s.waits)], Cause: errors.New("slow down")}}
		}
		return errs, nil
	}
	if s.calls == 2 {
		s.secondCall = time.Now()
	}
	return s.Store.DeleteObjects(ctx, bucket, objs)
}

// laggingStore lists the keys in late only from its second listing on: a store whose listing
// shows a new object late (Swift's container listing under load).
type laggingStore struct {
	*memstore.Store

	late     map[string]bool
	listings int
}

func (s *laggingStore) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	s.listings++
	first := s.listings == 1
	return s.Store.ListObjects(ctx, bucket, prefix, func(page []objectstore.ObjectVersion) error {
		var shown []objectstore.ObjectVersion
		for _, o := range page {
			if !first || !s.late[o.Key] {
				shown = append(shown, o)
			}
		}
		return fn(shown)
	})
}

// TestDeletePrefixDoneRestsOnAnEmptyListing: an object the first listing did not show is deleted
// before the deletion says Done, because Done rests on a listing after the last deletion.
func TestDeletePrefixDoneRestsOnAnEmptyListing(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New(10)
	fill(t, mem, "e--1/", 3)
	store := &laggingStore{Store: mem, late: map[string]bool{"e--1/obj-00000": true}}
	prefix, _ := objectstore.EntryPrefix("e--1")
	res, err := objectstore.DeletePrefix(ctx, store, "b", prefix, objectstore.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	if err := mem.ListObjects(ctx, "b", "e--1/", func(page []objectstore.ObjectVersion) error { left += len(page); return nil }); err != nil {
		t.Fatal(err)
	}
	if !res.Done || left != 0 || res.Deleted != 3 {
		t.Fatalf("Done %v with %d objects left, %d deleted; want Done with none left and 3 deleted", res.Done, left, res.Deleted)
	}
}
