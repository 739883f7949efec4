// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// recordingStore records the size of every delete request and the most requests it had in
// flight at once; each request takes a moment, so that concurrent ones overlap.
type recordingStore struct {
	*memstore.Store

	mu       sync.Mutex
	sizes    []int
	inFlight int
	peak     int
}

func (s *recordingStore) DeleteObjects(ctx context.Context, bucket string, objs []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	s.mu.Lock()
	s.sizes = append(s.sizes, len(objs))
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	time.Sleep(2 * time.Millisecond)
	return s.Store.DeleteObjects(ctx, bucket, objs)
}

// TestShortPrefixIsDeletedWithItsParallelism: a prefix of one listing page and a bit (the shape
// of an entry of 1,000 snapshots) is split across the parallelism, not sent as one batch of the
// store's maximum and a batch of one; a long prefix still goes out in full batches.
func TestShortPrefixIsDeletedWithItsParallelism(t *testing.T) {
	cases := []struct {
		objects, batch, parallelism int
		wantSizes                   map[int]int // batch size -> how many
	}{
		{objects: 1001, batch: 1000, parallelism: 8, wantSizes: map[int]int{125: 7, 126: 1}},
		{objects: 10, batch: 1000, parallelism: 8, wantSizes: map[int]int{10: 1}},             // too few to split
		{objects: 5000, batch: 1000, parallelism: 4, wantSizes: map[int]int{1000: 4, 250: 4}}, // full batches, then the last one split
		{objects: 120, batch: 100, parallelism: 8, wantSizes: map[int]int{60: 2}},             // no batch under 50
		{objects: 7, batch: 2, parallelism: 8, wantSizes: map[int]int{2: 3, 1: 1}},            // never over the store's batch
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d objects, batch %d, parallelism %d", c.objects, c.batch, c.parallelism), func(t *testing.T) {
			mem := memstore.New(c.batch).WithPageSize(1000)
			fill(t, mem, "n--1/", c.objects)
			store := &recordingStore{Store: mem}
			prefix, _ := objectstore.EntryPrefix("n--1")
			res, err := objectstore.DeletePrefix(context.Background(), store, "b", prefix, objectstore.DeleteOptions{Parallelism: c.parallelism})
			if err != nil || !res.Done || res.Deleted != c.objects {
				t.Fatalf("got %+v, %v; want all %d deleted", res, err, c.objects)
			}
			got := map[int]int{}
			for _, n := range store.sizes {
				got[n]++
			}
			if fmt.Sprint(got) != fmt.Sprint(c.wantSizes) {
				t.Fatalf("batch sizes %v; want %v", got, c.wantSizes)
			}
		})
	}
}

// TestSharedBudgetBoundsRequestsAcrossDeletions: prefixes deleted at once with one budget keep
// at most the budget's requests in flight together, and every one of them finishes.
func TestSharedBudgetBoundsRequestsAcrossDeletions(t *testing.T) {
	mem := memstore.New(1000).WithPageSize(1000)
	const entries = 5
	for e := range entries {
		fill(t, mem, fmt.Sprintf("n--%d/", e), 1000)
	}
	store := &recordingStore{Store: mem}
	budget := objectstore.NewBudget(3)
	var wg sync.WaitGroup
	results := make([]objectstore.DeleteResult, entries)
	errs := make([]error, entries)
	for e := range entries {
		wg.Go(func() {
			prefix, _ := objectstore.EntryPrefix(fmt.Sprintf("n--%d", e))
			results[e], errs[e] = objectstore.DeletePrefix(context.Background(), store, "b", prefix, objectstore.DeleteOptions{Parallelism: 8, Budget: budget})
		})
	}
	wg.Wait()
	for e := range entries {
		if errs[e] != nil || !results[e].Done || results[e].Deleted != 1000 {
			t.Fatalf("entry %d: %+v, %v; want all 1000 deleted", e, results[e], errs[e])
		}
	}
	if store.peak > 3 {
		t.Fatalf("%d requests in flight at once; the budget allows 3", store.peak)
	}
}

// TestBudgetIsGivenBackWhenTheContextEnds: a deletion that ends while waiting for the budget
// takes no slot with it.
func TestBudgetIsGivenBackWhenTheContextEnds(t *testing.T) {
	mem := memstore.New(10)
	fill(t, mem, "n--1/", 100)
	budget := objectstore.NewBudget(1)
	prefix, _ := objectstore.EntryPrefix("n--1")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if res, err := objectstore.DeletePrefix(ctx, slowStore{mem}, "b", prefix, objectstore.DeleteOptions{Parallelism: 4, Budget: budget}); err != nil || res.Done {
		t.Fatalf("got %+v, %v; want a pass cut off, not done, no failure", res, err)
	}
	res, err := objectstore.DeletePrefix(context.Background(), mem, "b", prefix, objectstore.DeleteOptions{Parallelism: 4, Budget: budget})
	if err != nil || !res.Done || res.Deleted != 100 {
		t.Fatalf("got %+v, %v; want the next pass to delete all 100 with the same budget", res, err)
	}
}
