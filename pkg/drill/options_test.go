// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"context"
	"errors"
	"maps"
	"os"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// understated lists every object as 1 byte, as a listing that does not fill Size would.
type understated struct{ memSource }

func (u understated) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	return u.memSource.ListObjects(ctx, bucket, prefix, func(page []objectstore.ObjectVersion) error {
		for i := range page {
			page[i].Size = 1
		}
		return fn(page)
	})
}

// The byte budget holds while reading, not only against the listing's sizes.
func TestDrillBudgetHoldsWhileReading(t *testing.T) {
	f := newChain(t, "")
	s := store(t, f.objects)
	const budget = 4096
	scratch := t.TempDir()
	results, err := Drill(context.Background(), understated{memSource{s}}, bucket, entry, Options{ScratchDir: scratch, MaxBytes: budget})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if ReasonOf(r.Err) != ReasonTooLarge {
		t.Fatalf("reason %q, want TooLarge: %v", ReasonOf(r.Err), r.Err)
	}
	// At most one read past the budget: io.Copy's buffer.
	if r.BytesRead <= budget || r.BytesRead > budget+32*1024 {
		t.Errorf("read %d bytes with a budget of %d", r.BytesRead, budget)
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("scratch directory not cleaned: %v", left)
	}
}

// A read rate limit slows the drill down but changes nothing of its outcome.
func TestDrillWithReadRate(t *testing.T) {
	f := newChain(t, ".gz")
	r, restored := drill(t, store(t, f.objects), Options{ReadRate: 1 << 20})
	if r.Err != nil || r.Revision != f.lastRev || len(restored) != len(f.want) {
		t.Fatalf("result %+v", r)
	}
}

// A drill cut off by its context proves nothing either way: no finding, nothing left behind.
func TestDrillCanceled(t *testing.T) {
	f := newChain(t, "")
	s := store(t, f.objects)
	ctx, cancel := context.WithCancel(context.Background())
	scratch := t.TempDir()
	opts := Options{ScratchDir: scratch}
	chains := checkChains(t, entry, listing(t, s))
	cancel()
	r := DrillChain(ctx, memSource{s}, bucket, chains[0], opts)
	if r.Err == nil || ReasonOf(r.Err) != "" || !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("a canceled drill gave %v (reason %q)", r.Err, ReasonOf(r.Err))
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("scratch directory not cleaned: %v", left)
	}
}

// Drills share nothing: two at once (as --restore-drill-concurrency 2 would run them), each with
// its own embedded etcd, restore each its own chain.
func TestDrillsAtOnce(t *testing.T) {
	chains := []chainFixture{newChain(t, ""), newChain(t, ".gz")}
	type outcome struct {
		r        Result
		restored map[string]string
	}
	out := make(chan outcome, len(chains))
	for _, f := range chains {
		s := store(t, f.objects)
		go func() {
			var restored map[string]string
			results, err := Drill(context.Background(), memSource{s}, bucket, entry, Options{
				ScratchDir: t.TempDir(),
				Inspect: func(ctx context.Context, _ string, kv clientv3.KV) error {
					resp, err := kv.Get(ctx, "\x00", clientv3.WithFromKey())
					if err != nil {
						return err
					}
					restored = map[string]string{}
					for _, p := range resp.Kvs {
						restored[string(p.Key)] = string(p.Value)
					}
					return nil
				},
			})
			if err != nil {
				results = []Result{{Err: err}}
			}
			out <- outcome{results[0], restored}
		}()
	}
	got := map[string]outcome{}
	for range chains {
		o := <-out
		got[o.r.Full] = o
	}
	for _, f := range chains {
		o := got[dir+f.names[0]]
		if o.r.Err != nil || o.r.Revision != f.lastRev || !maps.Equal(o.restored, f.want) {
			t.Errorf("drill of %s: %+v, restored %d keys, want %d at %d", f.names[0], o.r, len(o.restored), len(f.want), f.lastRev)
		}
	}
}
