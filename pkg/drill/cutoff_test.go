// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// longChain is the number of deltas of the chain a compromised control plane writes to its own
// prefix to hold the drill.
const longChain = 100_000

// longChainStore holds a full snapshot of etcd-main and longChain deltas after it, each a sound
// object (an empty JSON array and its hash), listed in one page (the memstore sorts all it holds
// for every page).
func longChainStore(t *testing.T) *memstore.Store {
	t.Helper()
	s := memstore.New(1000).WithPageSize(1 << 20)
	ctx := context.Background()
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: bucket}); err != nil {
		t.Fatal(err)
	}
	unix := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC).Unix()
	put := func(name string, data []byte) {
		if err := s.PutObject(ctx, bucket, dir+name, data); err != nil {
			t.Fatal(err)
		}
	}
	put(fmt.Sprintf("Full-00000000-00000001-%d", unix), withHash(make([]byte, 512)))
	delta := withHash([]byte("[]"))
	for i := range int64(longChain) {
		put(fmt.Sprintf("Incr-%08d-%08d-%d", i+2, i+2, unix+1+i), delta)
	}
	return s
}

// stalling is a restore that never ends by itself: one slower than any deadline.
func stalling(ctx context.Context, ch Chain, _ string, _ *os.File) Result {
	<-ctx.Done()
	r := newResult(ch)
	r.Err = fmt.Errorf("restore stopped: %w", ctx.Err())
	return r
}

// A chain of 100,000 deltas cannot hold a drill: the cap on deltas refuses it before a read, the
// cap on listed keys stops the listing, and the deadline stops a restore that would never end.
// Each is said as what it is (TooLarge, CutOff): not restorable is not claimed, nor restorable,
// nor a failure of the store; nothing is left in the scratch directory.
func TestALongChainCannotHoldTheDrill(t *testing.T) {
	s := longChainStore(t)
	for _, c := range []struct {
		name       string
		opts       Options
		wantReason Reason
		wantErr    bool // the drill as a whole is cut off (its listing)
		eitherWay  bool // cut off as a whole or in the restore, whichever the deadline meets
	}{
		{name: "cap on deltas", opts: Options{MaxDeltas: 20_000}, wantReason: ReasonTooLarge},
		{name: "cap on listed keys", opts: Options{MaxKeys: 50_000, MaxDeltas: 20_000}, wantReason: ReasonCutOff, wantErr: true},
		{name: "deadline", opts: Options{Deadline: time.Second}, wantReason: ReasonCutOff, eitherWay: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.ScratchDir = t.TempDir()
			opts.Restore = stalling
			results, err := Drill(context.Background(), memSource{s}, bucket, entry, opts)
			if c.eitherWay && err != nil {
				c.wantErr = true // the deadline passed while listing: the drill as a whole is cut off
			}
			if c.wantErr {
				if ReasonOf(err) != c.wantReason || len(results) != 0 {
					t.Fatalf("drill: %v, %d results; want %s for the drill as a whole", err, len(results), c.wantReason)
				}
			} else {
				if err != nil || len(results) != 1 {
					t.Fatalf("drill: %v, %d results", err, len(results))
				}
				r := results[0]
				if ReasonOf(r.Err) != c.wantReason || r.Deltas != longChain {
					t.Fatalf("etcd-main: %d deltas, %v; want %s", r.Deltas, r.Err, c.wantReason)
				}
				if c.wantReason == ReasonTooLarge && r.BytesRead != 0 {
					t.Errorf("%d bytes read of a chain over the cap", r.BytesRead)
				}
			}
			if left, _ := os.ReadDir(opts.ScratchDir); len(left) != 0 {
				t.Errorf("scratch directory not cleaned: %v", left)
			}
		})
	}
}

// The drill's own deadline is no failure of the caller's: a caller that ends its context gets
// its context's error, never CutOff.
func TestACanceledDrillIsNotCutOff(t *testing.T) {
	s := longChainStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	opts := Options{ScratchDir: t.TempDir(), Deadline: time.Hour, Restore: func(ctx context.Context, ch Chain, dir string, deltas *os.File) Result {
		cancel()
		return stalling(ctx, ch, dir, deltas)
	}}
	results, err := Drill(ctx, memSource{s}, bucket, entry, opts)
	if err != context.Canceled || len(results) != 1 || ReasonOf(results[0].Err) != "" {
		t.Fatalf("drill: %v, %+v; want context.Canceled and no reason", err, results)
	}
}
