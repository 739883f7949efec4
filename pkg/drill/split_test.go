// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// FetchAndRestore with the restore of this process restores what the sequential drill restored,
// with one fetcher or several, deltas held in memory or spilled to scratch.
func TestFetchAndRestore(t *testing.T) {
	f := newChain(t, ".gz")
	s := store(t, f.objects)
	chains := checkChains(t, entry, listing(t, s))
	if len(chains) != 1 || chains[0].Err != nil {
		t.Fatalf("chains %+v", chains)
	}
	for _, opts := range []Options{{Fetchers: 1}, {Fetchers: 3}, {Fetchers: 2, spillAbove: 64}} {
		dir := t.TempDir()
		var restored map[string]string
		opts.Inspect = func(_ context.Context, _ string, kv clientv3.KV) error {
			restored = readKVs(t, kv)
			return nil
		}
		r := FetchAndRestore(context.Background(), memSource{s}, bucket, chains[0], dir, opts, func(ctx context.Context, ch Chain, dir string, deltas *os.File) Result {
			return RestoreStream(ctx, ch, dir, deltas, opts)
		})
		if r.Err != nil || r.Revision != f.lastRev || r.Deltas != 3 || r.BytesRead != chains[0].Size() || !maps.Equal(restored, f.want) {
			t.Fatalf("%d fetchers, spill above %d: result %+v, restored %d keys of %d", opts.Fetchers, opts.spillAbove, r, len(restored), len(f.want))
		}
		if left := files(t, dir); len(left) != 1 || left[0] != "data" { // the caller removes dir
			t.Errorf("left in the scratch directory: %v", left)
		}
	}
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// The restore receives each delta's JSON, verified, without its hash, in the chain's order,
// and only once the full snapshot is in place.
func TestFetchAndRestoreSendsVerifiedDeltasInOrder(t *testing.T) {
	f := newChain(t, ".zlib")
	s := store(t, f.objects)
	ch := checkChains(t, entry, listing(t, s))[0]
	r := FetchAndRestore(context.Background(), memSource{s}, bucket, ch, t.TempDir(), Options{Fetchers: 3, spillAbove: 100},
		func(_ context.Context, ch Chain, dir string, deltas *os.File) Result {
			if _, err := os.Stat(dir + "/" + fullFile); err != nil {
				t.Errorf("the restore started without the full snapshot: %v", err)
			}
			for i, d := range ch.Deltas {
				got := readFrame(t, deltas)
				want, _ := io.ReadAll(decompressed(t, f.objects[f.names[i+1]], d.Compression))
				if !bytes.Equal(got, want[:len(want)-hashSize]) {
					t.Errorf("delta %d: got %q, want its JSON", i, got)
				}
			}
			return Result{Revision: ch.LastRevision()}
		})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
}

func readFrame(t *testing.T, r io.Reader) []byte {
	t.Helper()
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, binary.BigEndian.Uint64(hdr[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func decompressed(t *testing.T, data []byte, suffix string) io.Reader {
	t.Helper()
	var out bytes.Buffer
	if err := decompressInto(&out, bytes.NewReader(data), suffix, 4096); err != nil {
		t.Fatal(err)
	}
	return &out
}

// The outcome is the first failure in the chain's order, whichever half found it.
func TestFetchAndRestoreFirstFailureWins(t *testing.T) {
	f := newChain(t, "")
	damaged := maps.Clone(f.objects)
	damaged[f.names[3]] = flip(damaged[f.names[3]], 40) // the last delta
	s := store(t, damaged)
	ch := checkChains(t, entry, listing(t, s))[0]
	lastKey := dir + f.names[3]
	tests := []struct {
		name    string
		restore StreamRestorer
		reason  Reason
		key     string
	}{
		// The real restore applies the first two deltas while the third downloads: the damaged
		// last delta is still the finding, named.
		{"a damaged last delta", func(ctx context.Context, ch Chain, dir string, deltas *os.File) Result {
			return RestoreStream(ctx, ch, dir, deltas, Options{})
		}, ReasonHashMismatch, lastKey},
		// The restore refuses the full snapshot before reading any delta: that is first.
		{"the restore refuses the full snapshot", func(context.Context, Chain, string, *os.File) Result {
			return Result{Err: newError(ReasonRestoreFailed, dir+f.names[0], nil, "refused")}
		}, ReasonRestoreFailed, dir + f.names[0]},
		// The restore reads every delta it gets and then complains the stream ended: the
		// download's finding says why.
		{"the restore waits for the damaged delta", func(_ context.Context, _ Chain, _ string, deltas *os.File) Result {
			_, err := io.Copy(io.Discard, deltas)
			return Result{Err: errors.Join(errors.New("stream ended"), err)}
		}, ReasonHashMismatch, lastKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := FetchAndRestore(context.Background(), memSource{s}, bucket, ch, t.TempDir(), Options{Fetchers: 2}, tt.restore)
			var de *Error
			if !errors.As(r.Err, &de) || de.Reason != tt.reason || de.Key != tt.key {
				t.Fatalf("got %v, want %s about %s", r.Err, tt.reason, tt.key)
			}
		})
	}
}

// A restore that reports success short of the chain's last revision is no success.
func TestFetchAndRestoreChecksTheRestoresRevision(t *testing.T) {
	f := newChain(t, "")
	s := store(t, f.objects)
	ch := checkChains(t, entry, listing(t, s))[0]
	r := FetchAndRestore(context.Background(), memSource{s}, bucket, ch, t.TempDir(), Options{}, func(_ context.Context, ch Chain, _ string, deltas *os.File) Result {
		_, _ = io.Copy(io.Discard, deltas)
		return Result{Revision: ch.LastRevision() - 1}
	})
	if ReasonOf(r.Err) != ReasonChainBroken {
		t.Fatalf("got %v", r.Err)
	}
}

// A stream of deltas cut inside a delta (the sender stopped) is no finding about that delta.
func TestRestoreStreamCutIsNoFinding(t *testing.T) {
	f := newChain(t, "")
	s := store(t, f.objects)
	ch := checkChains(t, entry, listing(t, s))[0]
	dir := t.TempDir()
	fetcher := newFetcher(memSource{s}, bucket, Options{})
	if err := fetcher.fetch(context.Background(), *ch.Full, dir+"/"+fullFile, fullBuffer); err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], 1000)
	stream.Write(hdr[:])
	stream.WriteString(`[{"etcdEvent":`) // and nothing more
	r := RestoreStream(context.Background(), ch, dir, &stream, Options{})
	if r.Err == nil || ReasonOf(r.Err) != "" || !strings.Contains(r.Err.Error(), "ended inside a delta") {
		t.Fatalf("a cut stream gave %v (reason %q)", r.Err, ReasonOf(r.Err))
	}
}

func TestNewFinding(t *testing.T) {
	if err := NewFinding(ReasonChainBroken, "k", "gap"); ReasonOf(err) != ReasonChainBroken || err.Error() != "ChainBroken: k: gap" {
		t.Errorf("%v", err)
	}
	if err := NewFinding("Other", "", "x"); err != nil {
		t.Errorf("%v", err)
	}
}

// countingSource counts the deltas being read at once; a delta's OpenObject waits (up to 200 ms)
// for a third to open, so that a drill not bounded to two at a time would show three.
type countingSource struct {
	memSource

	mu        sync.Mutex
	open, max int
	third     chan struct{}
}

func (c *countingSource) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	if !strings.Contains(key, "Incr-") {
		return c.memSource.OpenObject(ctx, bucket, key, version)
	}
	c.mu.Lock()
	c.open++
	if c.open > c.max {
		c.max = c.open
	}
	if c.open == 3 {
		close(c.third)
	}
	c.mu.Unlock()
	select {
	case <-c.third:
	case <-time.After(200 * time.Millisecond):
	}
	rc, err := c.memSource.OpenObject(ctx, bucket, key, version)
	if err != nil {
		return nil, err
	}
	return &closer{ReadCloser: rc, done: func() { c.mu.Lock(); c.open--; c.mu.Unlock() }}, nil
}

type closer struct {
	io.ReadCloser

	done func()
}

func (c *closer) Close() error { c.done(); return c.ReadCloser.Close() }

// Deltas download at most Options.Fetchers at once.
func TestFetchAndRestoreBoundsDownloads(t *testing.T) {
	f := newChain(t, "")
	s := store(t, f.objects)
	ch := checkChains(t, entry, listing(t, s))[0]
	src := &countingSource{memSource: memSource{s}, third: make(chan struct{})}
	r := FetchAndRestore(context.Background(), src, bucket, ch, t.TempDir(), Options{Fetchers: 2}, func(ctx context.Context, ch Chain, dir string, deltas *os.File) Result {
		return RestoreStream(ctx, ch, dir, deltas, Options{})
	})
	if r.Err != nil || r.Revision != f.lastRev {
		t.Fatalf("result %+v", r)
	}
	if src.max != 2 {
		t.Errorf("%d deltas downloaded at once, want 2", src.max)
	}
}
