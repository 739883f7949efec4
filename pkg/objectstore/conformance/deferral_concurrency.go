// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// concurrentDeferrals is how many entries of one bucket defer their deletion at the same moment
// (a seed runs 5 entry workers; the bucket's reconcile may run alongside).
const concurrentDeferrals = 8

// deferralRounds repeats the race: a lost write shows only when the writes interleave.
const deferralRounds = 3

// testConcurrentDeferrals checks that the writes of a bucket's configuration do not drop each
// other: N entries defer their deletion (each on its own prefix) while the bucket is reconciled
// (EnsureBucket), all at once; afterwards every deferral that answered nil (the caller then
// releases its entry on that word) must still be covered, as the harness's DeferralCovers reads
// it back, and the neighbours outside every prefix must not be touched.
func testConcurrentDeferrals(t *testing.T, h Harness) {
	skipUnsupported(t, h, DeferralReadBack)
	ctx := ctxFor(t)
	name := newBucket(t, h)
	for round := range deferralRounds {
		prefixes := make([]string, concurrentDeferrals)
		var keys []string
		for i := range prefixes {
			prefixes[i] = fmt.Sprintf("shoot--c--r%d-%d/", round, i)
			keys = append(keys, prefixes[i]+"etcd-main/v2/Full-a", prefixes[i]+"etcd-main/v2/Incr-b")
		}
		if err := PutMany(ctx, h.Store, name, keys); err != nil {
			t.Fatal(err)
		}
		errs := make([]error, concurrentDeferrals+1)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, p := range prefixes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = h.Store.DeferDeletion(ctx, name, p)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[concurrentDeferrals] = h.Store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: h.Region})
		}()
		close(start)
		wg.Wait()
		if err := errs[concurrentDeferrals]; err != nil {
			t.Fatalf("round %d: EnsureBucket alongside the deferrals = %v", round, err)
		}
		for i, err := range errs[:concurrentDeferrals] {
			switch {
			case errors.Is(err, objectstore.ErrUnsupported):
				t.Fatalf("round %d: DeferDeletion(%q) = %v; the harness declares deferral supported", round, prefixes[i], err)
			case err != nil:
				// A deferral that could not finish is no lost one: the entry is retried. It must
				// say so, and the others are still checked.
				t.Logf("round %d: DeferDeletion(%q) = %v (retried by its entry)", round, prefixes[i], err)
			}
		}
		if !slices.Contains(errs[:concurrentDeferrals], nil) {
			t.Fatalf("round %d: none of the %d concurrent deferrals finished: %v", round, concurrentDeferrals, errors.Join(errs...))
		}
		for i, p := range prefixes {
			if errs[i] != nil {
				continue
			}
			if err := h.DeferralCovers(ctx, name, p); err != nil {
				t.Errorf("round %d: the deferral of %q answered nil, but after the concurrent writes: %v", round, p, err)
			}
		}
		if t.Failed() {
			return
		}
	}
}
