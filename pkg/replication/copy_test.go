// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

const entry = "shoot--p--s--1"

func snapshotKey(i int) string {
	if i == 0 {
		return entry + "/etcd-main/v2/Full-00000000-00000100-1764392400.gz"
	}
	return fmt.Sprintf("%s/etcd-main/v2/Incr-%08d-%08d-%d.gz", entry, 100*i+1, 100*i+100, 1764392400+60*i)
}

// stores returns a source with n snapshots and one more object that is not a snapshot, under
// the entry's prefix, one of a neighbouring entry, and an empty destination of another store.
func stores(t *testing.T, n int) (*memstore.Faults, *memstore.Faults) {
	t.Helper()
	ctx := context.Background()
	src, dst := memstore.WithFaults(memstore.New(1000)), memstore.WithFaults(memstore.New(1000))
	for _, s := range []*memstore.Faults{src, dst} {
		if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: "b"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if err := src.PutObject(ctx, "b", snapshotKey(i), []byte(fmt.Sprintf("snapshot %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{entry + "/etcd-main/not-a-snapshot", entry + "0/etcd-main/v2/Full-00000000-00000100-1764392400.gz"} {
		if err := src.PutObject(ctx, "b", k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	return src, dst
}

func copyEntry(src, dst *memstore.Faults, opts replication.Options) (replication.Result, error) {
	prefix, err := objectstore.EntryPrefix(entry)
	if err != nil {
		panic(err)
	}
	return replication.Copy(context.Background(), replication.From{Store: src, Bucket: "b"}, replication.To{Store: dst, Bucket: "b"}, prefix, opts)
}

func keys(t *testing.T, s objectstore.DataPlane) []string {
	t.Helper()
	var out []string
	err := s.ListObjects(context.Background(), "b", "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			out = append(out, o.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCopyCopiesSnapshotsOnceWithTheirContent(t *testing.T) {
	src, dst := stores(t, 25)
	res, err := copyEntry(src, dst, replication.Options{Parallelism: 3})
	if err != nil || res.Copied != 25 || !res.Done() || res.Lag != 0 || res.Vanished != 0 {
		t.Fatalf("first pass: %+v, %v; want 25 copied, done, no lag", res, err)
	}
	var want []string
	for i := range 25 {
		want = append(want, snapshotKey(i))
	}
	slices.Sort(want)
	if got := keys(t, dst); !slices.Equal(got, want) {
		t.Errorf("destination holds %v; want exactly the entry's snapshots %v", got, want)
	}
	for _, k := range want {
		a, _ := objectstore.ReadObject(context.Background(), src, "b", k)
		b, err := objectstore.ReadObject(context.Background(), dst, "b", k)
		if err != nil || string(a) != string(b) {
			t.Errorf("%s: destination holds %q (%v), source %q", k, b, err, a)
		}
	}
	puts := dst.Calls(memstore.OpPutObject)
	res, err = copyEntry(src, dst, replication.Options{})
	if err != nil || res.Copied != 0 || res.Plan.InSync != 25 || !res.Done() {
		t.Errorf("second pass: %+v, %v; want nothing copied, 25 in sync", res, err)
	}
	if dst.Calls(memstore.OpPutObject) != puts {
		t.Errorf("the second pass wrote %d objects; want none", dst.Calls(memstore.OpPutObject)-puts)
	}
}

func TestCopyNeverOverwritesANewerObject(t *testing.T) {
	src, dst := stores(t, 2)
	ctx := context.Background()
	if err := dst.PutObject(ctx, "b", snapshotKey(1), []byte("someone else's")); err != nil {
		t.Fatal(err)
	}
	res, err := copyEntry(src, dst, replication.Options{})
	if err != nil || res.Copied != 1 || len(res.Plan.Conflicts) != 1 || res.Done() || res.Lag <= 0 {
		t.Fatalf("%+v, %v; want one copied, one conflict, not done, lagging", res, err)
	}
	if got, _ := objectstore.ReadObject(ctx, dst, "b", snapshotKey(1)); string(got) != "someone else's" {
		t.Errorf("the newer destination object was overwritten with %q", got)
	}
}

func TestCopyReportsWhatItLeftBehind(t *testing.T) {
	src, dst := stores(t, 3)
	dst.Fail(memstore.OpPutObject, fmt.Errorf("slow down: %w", objectstore.ErrThrottled))
	res, err := copyEntry(src, dst, replication.Options{})
	if !errors.Is(err, objectstore.ErrThrottled) || len(res.Failed) != 3 || res.Copied != 0 || res.Done() || res.Lag <= 0 {
		t.Fatalf("%+v, %v; want three failed (throttled), not done, lagging", res, err)
	}
	if got := keys(t, dst); len(got) != 0 {
		t.Errorf("destination holds %v", got)
	}

	dst.Fail(memstore.OpPutObject, nil)
	src.Fail(memstore.OpOpenObject, fmt.Errorf("denied: %w", objectstore.ErrForbidden))
	if res, err := copyEntry(src, dst, replication.Options{}); !errors.Is(err, objectstore.ErrForbidden) || len(res.Failed) != 3 || res.Done() {
		t.Errorf("source unreadable: %+v, %v; want three failed (forbidden)", res, err)
	}
}

func TestCopyCountsSnapshotsGoneMeanwhileAsVanished(t *testing.T) {
	src, dst := stores(t, 2)
	src.Fail(memstore.OpOpenObject, fmt.Errorf("gone: %w", objectstore.ErrNotFound))
	res, err := copyEntry(src, dst, replication.Options{})
	if err != nil || res.Vanished != 2 || res.Copied != 0 || !res.Done() {
		t.Errorf("%+v, %v; want two vanished, done", res, err)
	}
}

func TestCopyStopsOnAFailedListing(t *testing.T) {
	for _, side := range []replication.Side{replication.SideSource, replication.SideDestination} {
		t.Run(side.String(), func(t *testing.T) {
			src, dst := stores(t, 2)
			failing := map[replication.Side]*memstore.Faults{replication.SideSource: src, replication.SideDestination: dst}[side]
			failing.Fail(memstore.OpListObjects, fmt.Errorf("denied: %w", objectstore.ErrForbidden))
			res, err := copyEntry(src, dst, replication.Options{})
			if !errors.Is(err, objectstore.ErrForbidden) || res.Copied != 0 || dst.Calls(memstore.OpPutObject) != 0 {
				t.Errorf("%+v, %v; want the listing's error and nothing written", res, err)
			}
			var se *replication.SideError
			if !errors.As(err, &se) || se.Side != side {
				t.Errorf("%v (%#v); want a *SideError of the %s", err, se, side)
			}
		})
	}
}

func TestCopyRefusesAWholeBucket(t *testing.T) {
	src, dst := stores(t, 1)
	_, err := replication.Copy(context.Background(), replication.From{Store: src, Bucket: "b"}, replication.To{Store: dst, Bucket: "b"}, objectstore.WholeBucket(), replication.Options{})
	if !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Errorf("%v; want ErrInvalidConfig", err)
	}
	if _, err := replication.Copy(context.Background(), replication.From{Store: src, Bucket: "b"}, replication.To{Store: dst, Bucket: "b"}, objectstore.Prefix{}, replication.Options{}); err == nil {
		t.Error("the zero Prefix was accepted")
	}
}

// misLister lists a key outside the prefix asked for.
type misLister struct{ *memstore.Faults }

func (misLister) ListObjects(_ context.Context, _, _ string, fn func([]objectstore.ObjectVersion) error) error {
	return fn([]objectstore.ObjectVersion{{Key: "shoot--other--1/etcd-main/v2/Full-00000000-00000100-1764392400.gz", Size: 1}})
}

func (m misLister) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	return m.Faults.OpenObject(ctx, bucket, key, version)
}

func TestCopyStopsOnAKeyOutsideThePrefix(t *testing.T) {
	src, dst := stores(t, 1)
	prefix, _ := objectstore.EntryPrefix(entry)
	_, err := replication.Copy(context.Background(), replication.From{Store: misLister{src}, Bucket: "b"}, replication.To{Store: dst, Bucket: "b"}, prefix, replication.Options{})
	var se *replication.SideError
	if err == nil || dst.Calls(memstore.OpPutObject) != 0 || !errors.As(err, &se) || se.Side != replication.SideSource {
		t.Errorf("%v; want the source's *SideError and nothing written", err)
	}
}

// recordingCopier copies inside one memstore, as a store's server-side copy does, and counts.
type recordingCopier struct {
	store  *memstore.Faults
	copies atomic.Int64
}

func (c *recordingCopier) CopyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string) error {
	c.copies.Add(1)
	data, err := objectstore.ReadObject(ctx, c.store.Store, srcBucket, src.Key)
	if err != nil {
		return err
	}
	return c.store.PutObject(ctx, dstBucket, dstKey, data)
}

func TestCopyServerSideWhereTheDestinationHasACopier(t *testing.T) {
	ctx := context.Background()
	src, _ := stores(t, 3)
	if err := src.EnsureBucket(ctx, objectstore.Bucket{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	copier := &recordingCopier{store: src}
	prefix, _ := objectstore.EntryPrefix(entry)
	puts := src.Calls(memstore.OpPutObject)
	res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: "b"}, replication.To{Store: src, Bucket: "c", Copier: copier}, prefix, replication.Options{ServerSideMinBytes: -1})
	if err != nil || res.Copied != 3 || copier.copies.Load() != 3 || src.Calls(memstore.OpOpenObject) != 0 || src.Calls(memstore.OpPutObject)-puts != 3 {
		t.Errorf("%+v, %v; %d server-side copies, %d reads through the engine; want 3 copies, no reads", res, err, copier.copies.Load(), src.Calls(memstore.OpOpenObject))
	}
}

// TestCopyCopiesTheVersionARestoreReads: from a versioned S3-like source (memstore plays S3's
// rule) the copy holds each key's oldest version, as etcd-backup-restore restores it, and a key
// whose newest version is a delete marker is copied unless its oldest version is marked.
func TestCopyCopiesTheVersionARestoreReads(t *testing.T) {
	ctx := context.Background()
	src, dst := stores(t, 0)
	if err := src.SetVersioning(ctx, "b", true); err != nil {
		t.Fatal(err)
	}
	rewritten, deleted, excluded := snapshotKey(0), snapshotKey(1), snapshotKey(2)
	for _, w := range []struct{ key, data string }{{rewritten, "first"}, {rewritten, "second"}, {deleted, "deleted"}, {excluded, "excluded"}} {
		if err := src.PutObject(ctx, "b", w.key, []byte(w.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.MarkExcluded(ctx, "b", excluded); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{deleted, excluded} {
		if errs, err := src.DeleteObjects(ctx, "b", []objectstore.ObjectVersion{{Key: k}}); err != nil || len(errs) > 0 {
			t.Fatal(errs, err)
		}
	}
	res, err := copyEntry(src, dst, replication.Options{})
	if err != nil || res.Copied != 2 || res.Plan.Excluded != 1 || !res.Done() {
		t.Fatalf("%+v, %v; want 2 copied, 1 excluded", res, err)
	}
	for key, want := range map[string]string{rewritten: "first", deleted: "deleted"} {
		if got, err := objectstore.ReadObject(ctx, dst, "b", key); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q (the version a restore reads)", key, got, err, want)
		}
	}
	if _, err := objectstore.ReadObject(ctx, dst, "b", excluded); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("the excluded snapshot: %v; want not copied", err)
	}
}

// racingDestination writes its key to the destination right after the destination's listing:
// another writer between the copy's listing and its write.
type racingDestination struct {
	*memstore.Faults

	key, data string
}

func (r racingDestination) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	if err := r.Faults.ListObjects(ctx, bucket, prefix, fn); err != nil {
		return err
	}
	return r.PutObject(ctx, bucket, r.key, []byte(r.data))
}

// TestCopyNeverOverwritesAnObjectWrittenAfterTheListing: a key missing when listed, or listed
// older, and written by someone else before the copy writes it, is kept and counted a write
// conflict in the lag; the other snapshots are copied.
func TestCopyNeverOverwritesAnObjectWrittenAfterTheListing(t *testing.T) {
	ctx := context.Background()
	for _, listedOlder := range []bool{false, true} {
		src, dst := stores(t, 3)
		raced := snapshotKey(1)
		if listedOlder {
			if err := dst.PutObject(ctx, "b", raced, []byte("older, other size")); err != nil {
				t.Fatal(err)
			}
			// The destination's object must be older than the source's to be overwritten.
			if err := src.PutObject(ctx, "b", raced, []byte("snapshot 1")); err != nil {
				t.Fatal(err)
			}
		}
		prefix, _ := objectstore.EntryPrefix(entry)
		res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: "b"},
			replication.To{Store: racingDestination{Faults: dst, key: raced, data: "someone else's"}, Bucket: "b"}, prefix, replication.Options{})
		if err != nil || res.Copied != 2 || len(res.WriteConflicts) != 1 || res.WriteConflicts[0].Key != raced || res.Done() || res.Lag <= 0 || res.Unguarded != 0 {
			t.Fatalf("listed older %t: %+v, %v; want 2 copied, %s a write conflict, not done, lagging", listedOlder, res, err, raced)
		}
		if got, err := objectstore.ReadObject(ctx, dst, "b", raced); err != nil || string(got) != "someone else's" {
			t.Errorf("listed older %t: %s holds %q, %v; want the other writer's object kept", listedOlder, raced, got, err)
		}
	}
}

// unconditional hides the destination's conditional write.
type unconditional struct{ replication.Destination }

func TestCopyCountsUnguardedWrites(t *testing.T) {
	src, dst := stores(t, 2)
	prefix, _ := objectstore.EntryPrefix(entry)
	res, err := replication.Copy(context.Background(), replication.From{Store: src, Bucket: "b"},
		replication.To{Store: unconditional{dst}, Bucket: "b"}, prefix, replication.Options{})
	if err != nil || res.Copied != 2 || res.Unguarded != 2 {
		t.Fatalf("%+v, %v; want 2 copied, both unguarded", res, err)
	}
}

// absentOnly guards only writes to a missing key, as Swift does (no If-Match on a PUT): a
// conditional write of another kind is refused with ErrUnsupported.
type absentOnly struct{ *memstore.Faults }

func (absentOnly) WriteGuards(g objectstore.Guard) bool { return g == objectstore.GuardAbsent }

func (a absentOnly) PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	if !a.WriteGuards(cond.Guard()) {
		return fmt.Errorf("%s: %w", cond.Guard(), objectstore.ErrUnsupported)
	}
	return a.Faults.PutObjectStreamIf(ctx, bucket, key, r, size, cond)
}

// TestCopyCountsWritesOfAKindTheStoreDoesNotGuard: over a destination that guards missing keys
// only, the snapshot the copy lacks is written guarded and the one it holds older is replaced
// unguarded, and counted so.
func TestCopyCountsWritesOfAKindTheStoreDoesNotGuard(t *testing.T) {
	ctx := context.Background()
	src, dst := stores(t, 2)
	older := snapshotKey(1)
	if err := dst.PutObject(ctx, "b", older, []byte("older, other size")); err != nil {
		t.Fatal(err)
	}
	if err := src.PutObject(ctx, "b", older, []byte("snapshot 1")); err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix(entry)
	res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: "b"},
		replication.To{Store: absentOnly{dst}, Bucket: "b"}, prefix, replication.Options{})
	if err != nil || res.Copied != 2 || res.Unguarded != 1 || len(res.Failed) != 0 {
		t.Fatalf("%+v, %v; want 2 copied, 1 of them (the overwrite) unguarded", res, err)
	}
	if got, err := objectstore.ReadObject(ctx, dst, "b", older); err != nil || string(got) != "snapshot 1" {
		t.Errorf("%s holds %q, %v; want the source's snapshot", older, got, err)
	}
}

// meteredDestination states each object's buffer as its size and records the most bytes its
// writes held at once.
type meteredDestination struct {
	*memstore.Faults

	mu         *sync.Mutex
	held, peak *int64
}

func (m meteredDestination) StreamBufferBytes(size int64) int64 { return size }

func (m meteredDestination) PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	m.mu.Lock()
	*m.held += size
	*m.peak = max(*m.peak, *m.held)
	m.mu.Unlock()
	defer func() { m.mu.Lock(); *m.held -= size; m.mu.Unlock() }()
	time.Sleep(2 * time.Millisecond) // lets the other copies of the pass start meanwhile
	return m.Faults.PutObjectStreamIf(ctx, bucket, key, r, size, cond)
}

// TestCopyStaysWithinItsByteBudget: large and small snapshots mixed, many copies allowed at
// once: the writers' buffers held together never exceed the budget, and an object larger than
// the whole budget is copied alone.
func TestCopyStaysWithinItsByteBudget(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name       string
		large      int
		budget     int64
		wantAtMost int64
	}{
		{"large ones take their share", 64, 70, 70},
		{"larger than the budget: alone", 100, 70, 100},
	} {
		src, dst := stores(t, 0)
		for i := range 12 {
			size := 4
			if i%6 == 0 {
				size = c.large
			}
			if err := src.PutObject(ctx, "b", snapshotKey(i), make([]byte, size)); err != nil {
				t.Fatal(err)
			}
		}
		var held, peak int64
		m := meteredDestination{Faults: dst, mu: &sync.Mutex{}, held: &held, peak: &peak}
		prefix, _ := objectstore.EntryPrefix(entry)
		res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: "b"}, replication.To{Store: m, Bucket: "b"}, prefix,
			replication.Options{Parallelism: 8, MaxBufferBytes: c.budget})
		if err != nil || res.Copied != 12 {
			t.Fatalf("%s: %+v, %v; want 12 copied", c.name, res, err)
		}
		if peak > c.wantAtMost || res.PeakBufferBytes > c.budget {
			t.Errorf("%s: the writes held %d bytes at once, %d reserved; want at most %d, %d", c.name, peak, res.PeakBufferBytes, c.wantAtMost, c.budget)
		}
	}
}

// openSignal is a source that tells on opened each key it is asked to open.
type openSignal struct {
	*memstore.Faults

	opened chan string
}

func (s openSignal) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	s.opened <- key
	return s.Faults.OpenObject(ctx, bucket, key, version)
}

// waitingDestination's write of first waits until the source has opened second.
type waitingDestination struct {
	*memstore.Faults

	first, second string
	opened        chan string
	overlapped    *bool
}

func (d waitingDestination) PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	if key == d.first {
		timeout := time.After(time.Minute)
	wait:
		for {
			select {
			case k := <-d.opened:
				if k == d.second {
					*d.overlapped = true
					break wait
				}
			case <-timeout:
				break wait
			}
		}
		go func() {
			for range d.opened { // the later opens
			}
		}()
	}
	return d.Faults.PutObjectStreamIf(ctx, bucket, key, r, size, cond)
}

// TestCopyReadsSmallSnapshotsAhead: with one write at a time, the next small snapshot is read
// while the previous one is written (replication.PrefetchMaxBytes), and every snapshot arrives
// whole.
func TestCopyReadsSmallSnapshotsAhead(t *testing.T) {
	src, dst := stores(t, 3)
	opened := make(chan string, 1)
	overlapped := false
	d := waitingDestination{Faults: dst, first: snapshotKey(0), second: snapshotKey(1), opened: opened, overlapped: &overlapped}
	prefix, _ := objectstore.EntryPrefix(entry)
	res, err := replication.Copy(context.Background(), replication.From{Store: openSignal{Faults: src, opened: opened}, Bucket: "b"},
		replication.To{Store: d, Bucket: "b"}, prefix, replication.Options{Parallelism: 1})
	close(opened)
	if err != nil || res.Copied != 3 {
		t.Fatalf("%+v, %v; want 3 copied", res, err)
	}
	if !overlapped {
		t.Errorf("the second snapshot was not read while the first was written")
	}
	for i := range 3 {
		if b, err := objectstore.ReadObject(context.Background(), dst, "b", snapshotKey(i)); err != nil || string(b) != fmt.Sprintf("snapshot %d", i) {
			t.Errorf("%s: %q, %v", snapshotKey(i), b, err)
		}
	}
}

// TestCopyMixesPrefetchedAndStreamedWithOneSlot: small snapshots read ahead and one larger than
// replication.PrefetchMaxBytes streamed, one write at a time and a budget that holds one large
// object: every snapshot is copied (no prefetch holds the budget the loop waits for).
func TestCopyMixesPrefetchedAndStreamedWithOneSlot(t *testing.T) {
	ctx := context.Background()
	src, dst := stores(t, 0)
	sizes := []int{4, replication.PrefetchMaxBytes + 1, 4, 4, replication.PrefetchMaxBytes + 1, 4}
	for i, size := range sizes {
		if err := src.PutObject(ctx, "b", snapshotKey(i), make([]byte, size)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := copyEntry(src, dst, replication.Options{Parallelism: 1, MaxBufferBytes: replication.PrefetchMaxBytes + 1})
	if err != nil || res.Copied != len(sizes) || !res.Done() {
		t.Fatalf("%+v, %v; want %d copied", res, err, len(sizes))
	}
}
