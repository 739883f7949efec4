// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// largeSnapshot is larger than replication.PrefetchMaxBytes: streamed from its read into its write.
var largeSnapshot = bytes.Repeat([]byte("0123456789abcdef"), (replication.PrefetchMaxBytes+1<<20)/16)

// overtimeStores holds the large snapshot (snapshotKey(0), the pass's first) and a small one
// (snapshotKey(1)) in the source.
func overtimeStores(t *testing.T) (*memstore.Faults, *memstore.Faults) {
	t.Helper()
	src, dst := stores(t, 0)
	for i, data := range [][]byte{largeSnapshot, []byte("snapshot 1")} {
		if err := src.PutObject(context.Background(), "b", snapshotKey(i), data); err != nil {
			t.Fatal(err)
		}
	}
	return src, dst
}

// slowSource reads key as a store far away would: all but its last 64 KiB at once, the rest
// only once past is closed (the pass's deadline has passed), or when the read's context ends.
type slowSource struct {
	*memstore.Faults

	key  string
	past <-chan struct{}
}

func (s slowSource) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	r, err := s.Faults.OpenObject(ctx, bucket, key, version)
	if err != nil || key != s.key {
		return r, err
	}
	data, err := io.ReadAll(r)
	_ = r.Close()
	if err != nil {
		return nil, err
	}
	cut := len(data) - 64<<10
	return io.NopCloser(io.MultiReader(bytes.NewReader(data[:cut]), &waitingReader{ctx: ctx, past: s.past, rest: bytes.NewReader(data[cut:])})), nil
}

type waitingReader struct {
	ctx  context.Context
	past <-chan struct{}
	rest io.Reader
}

func (w *waitingReader) Read(p []byte) (int, error) {
	select {
	case <-w.past:
		return w.rest.Read(p)
	case <-w.ctx.Done():
		return 0, w.ctx.Err()
	}
}

// overtime records the objects a pass reports in flight at its deadline and closes past at the first.
type overtime struct {
	mu   sync.Mutex
	keys []string
	past chan struct{}
}

func newOvertime() *overtime { return &overtime{past: make(chan struct{})} }

func (o *overtime) seen(v objectstore.ObjectVersion) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.keys = append(o.keys, v.Key); len(o.keys) == 1 {
		close(o.past)
	}
}

func holds(t *testing.T, dst *memstore.Faults, key string) []byte {
	t.Helper()
	data, err := objectstore.ReadObject(context.Background(), dst, "b", key)
	if errors.Is(err, objectstore.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCopyGoesOnPastTheDeadlineWhileBytesFlow: a large snapshot still being read at the pass's
// deadline is copied whole once the Guard allows its commit; the small snapshot
// after it is not started after the deadline (cut off, in the result's failures).
func TestCopyGoesOnPastTheDeadlineWhileBytesFlow(t *testing.T) {
	src, dst := overtimeStores(t)
	ot := newOvertime()
	asked := 0
	prefix, _ := objectstore.EntryPrefix(entry)
	res, err := replication.Copy(context.Background(), replication.From{Store: slowSource{Faults: src, key: snapshotKey(0), past: ot.past}, Bucket: "b"},
		replication.To{Store: dst, Bucket: "b"}, prefix, replication.Options{
			Parallelism: 1, Deadline: time.Second, Overtime: ot.seen,
			Guard: func(context.Context) error { asked++; return nil },
		})
	if res.Copied != 1 || res.Streamed != 1 || len(res.Failed) != 1 || res.Failed[0].Object.Key != snapshotKey(1) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%+v, %v; want the large snapshot copied, the small one cut off", res, err)
	}
	if got := holds(t, dst, snapshotKey(0)); !bytes.Equal(got, largeSnapshot) {
		t.Errorf("the copy holds %d bytes of the large snapshot; want its %d", len(got), len(largeSnapshot))
	}
	if got := holds(t, dst, snapshotKey(1)); got != nil {
		t.Errorf("the small snapshot, not started before the deadline, was written: %q", got)
	}
	// Asked at the end, and again every Deadline/2 where the end comes later than that.
	if asked < 1 || !slices.Equal(ot.keys, []string{snapshotKey(0)}) {
		t.Errorf("the Guard was asked %d times, objects in flight at the deadline %v; want at least once, the large snapshot", asked, ot.keys)
	}
}

// TestCopyPastTheDeadlineCommitsNothingTheGuardRefuses: a large snapshot still being read at
// the deadline is not written where the Guard refuses it (or there is none): nothing of it is in
// the destination.
func TestCopyPastTheDeadlineCommitsNothingTheGuardRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		guard func(context.Context) error
		want  error
	}{
		{"refused", func(context.Context) error { return errors.New("the entry is being deleted") }, replication.ErrCommitRefused},
		{"no guard", nil, context.DeadlineExceeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, dst := overtimeStores(t)
			ot := newOvertime()
			prefix, _ := objectstore.EntryPrefix(entry)
			res, _ := replication.Copy(context.Background(), replication.From{Store: slowSource{Faults: src, key: snapshotKey(0), past: ot.past}, Bucket: "b"},
				replication.To{Store: dst, Bucket: "b"}, prefix, replication.Options{Parallelism: 1, Deadline: time.Second, Overtime: ot.seen, Guard: c.guard})
			if res.Copied != 0 || len(res.Failed) != 2 || res.Failed[0].Object.Key != snapshotKey(0) || !errors.Is(res.Failed[0].Err, c.want) {
				t.Fatalf("%+v; want nothing copied, the large snapshot failed with %v", res, c.want)
			}
			if got := holds(t, dst, snapshotKey(0)); got != nil {
				t.Errorf("the refused snapshot was written (%d bytes)", len(got))
			}
		})
	}
}

// lingeringDestination reads the whole stream, then commits only once release is closed; its
// write's context ending first writes nothing (as a store's writer still uploading its last parts).
type lingeringDestination struct {
	*memstore.Faults

	release <-chan struct{}
}

func (d lingeringDestination) PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	select {
	case <-d.release:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return d.Faults.PutObjectStreamIf(ctx, bucket, key, bytes.NewReader(data), size, cond)
}

// TestCopyReadBeforeTheDeadlineCommitsAfterItOnlyWhereTheGuardAllows: a snapshot read whole
// before the deadline whose write is still going on at it: the Guard is asked then; allowed, it
// commits; refused, or not committed within Options.Deadline of the look, its write is cancelled
// and nothing is written.
func TestCopyReadBeforeTheDeadlineCommitsAfterItOnlyWhereTheGuardAllows(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer error
		commit bool // the writer commits once the Guard answered
		want   error
	}{
		{"allowed", nil, true, nil},
		{"refused", errors.New("the entry is gone"), false, replication.ErrCommitRefused},
		{"allowed, not committed in time", nil, false, replication.ErrCommitRefused},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, dst := overtimeStores(t)
			release := make(chan struct{})
			ot := newOvertime()
			prefix, _ := objectstore.EntryPrefix(entry)
			res, _ := replication.Copy(context.Background(), replication.From{Store: src, Bucket: "b"},
				replication.To{Store: lingeringDestination{Faults: dst, release: release}, Bucket: "b"}, prefix, replication.Options{
					Parallelism: 1, Deadline: time.Second, Overtime: ot.seen,
					Guard: func(context.Context) error {
						if c.commit {
							close(release)
						}
						return c.answer
					},
				})
			got := holds(t, dst, snapshotKey(0))
			if c.want == nil {
				if res.Copied != 1 || !bytes.Equal(got, largeSnapshot) {
					t.Fatalf("%+v; the copy holds %d bytes; want the large snapshot copied whole", res, len(got))
				}
				return
			}
			if res.Copied != 0 || len(res.Failed) == 0 || res.Failed[0].Object.Key != snapshotKey(0) || !errors.Is(res.Failed[0].Err, c.want) || got != nil {
				t.Fatalf("%+v; the copy holds %d bytes; want the large snapshot failed with %v, nothing written", res, len(got), c.want)
			}
			if c.name == "allowed, not committed in time" && !strings.Contains(res.Failed[0].Err.Error(), "not committed within") {
				t.Errorf("error %v; want it to say the commit came too late", res.Failed[0].Err)
			}
		})
	}
}

// exactDestination reads a stream as the cloud stores' writers do (objectstore.ExactStream):
// what it reads up to io.EOF it stores, even where its context ended meanwhile (a commit
// request already sent).
type exactDestination struct{ *memstore.Faults }

func (d exactDestination) PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	data, err := io.ReadAll(objectstore.ExactStream(r, key, size))
	if err != nil {
		return err
	}
	return d.Faults.PutObjectStreamIf(context.WithoutCancel(ctx), bucket, key, bytes.NewReader(data), size, cond)
}

// TestARefusalCausedByAnEOFIsNoEnd: a Guard's refusal whose cause wraps io.EOF (a dropped
// connection to the API server: a *url.Error of io.EOF) is a refusal to the writer, not the
// stream's end: nothing is stored.
func TestARefusalCausedByAnEOFIsNoEnd(t *testing.T) {
	src, dst := overtimeStores(t)
	ot := newOvertime()
	prefix, _ := objectstore.EntryPrefix(entry)
	guard := func(context.Context) error {
		return fmt.Errorf("reading BackupEntry x from the API server: %w", &url.Error{Op: "Get", URL: "x", Err: io.EOF})
	}
	res, _ := replication.Copy(context.Background(), replication.From{Store: slowSource{Faults: src, key: snapshotKey(0), past: ot.past}, Bucket: "b"},
		replication.To{Store: exactDestination{dst}, Bucket: "b"}, prefix, replication.Options{Parallelism: 1, Deadline: time.Second, Overtime: ot.seen, Guard: guard})
	if res.Copied != 0 || len(res.Failed) != 2 || res.Failed[0].Object.Key != snapshotKey(0) || !errors.Is(res.Failed[0].Err, replication.ErrCommitRefused) || errors.Is(res.Failed[0].Err, io.EOF) {
		t.Fatalf("%+v; want nothing copied, the large snapshot refused (not an io.EOF)", res)
	}
	if got := holds(t, dst, snapshotKey(0)); got != nil {
		t.Errorf("the refused snapshot was written (%d bytes)", len(got))
	}
}

// TestAWriteInOvertimeStopsWhenTheGuardRefusesIt: a large snapshot read on past the deadline
// (here its last bytes never come) is looked at again and again while it is read; allowed, it
// goes on, and the first refusal cancels its write: nothing of it is stored, and the Guard is
// not asked again.
func TestAWriteInOvertimeStopsWhenTheGuardRefusesIt(t *testing.T) {
	src, dst := overtimeStores(t)
	never := make(chan struct{})
	var asked atomic.Int32
	refused := errors.New("the entry is being deleted")
	guard := func(context.Context) error {
		if asked.Add(1) < 3 {
			return nil
		}
		return refused
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // ends the test without the looks
	defer cancel()
	prefix, _ := objectstore.EntryPrefix(entry)
	res, _ := replication.Copy(ctx, replication.From{Store: slowSource{Faults: src, key: snapshotKey(0), past: never}, Bucket: "b"},
		replication.To{Store: dst, Bucket: "b"}, prefix, replication.Options{Parallelism: 1, Deadline: 200 * time.Millisecond, Guard: guard})
	if res.Copied != 0 || len(res.Failed) != 2 || res.Failed[0].Object.Key != snapshotKey(0) || !errors.Is(res.Failed[0].Err, refused) {
		t.Fatalf("%+v; want nothing copied, the large snapshot refused", res)
	}
	if got := asked.Load(); got != 3 {
		t.Errorf("the Guard was asked %d times; want 3 (two allowing, the refusal)", got)
	}
	if got := holds(t, dst, snapshotKey(0)); got != nil {
		t.Errorf("the refused snapshot was written (%d bytes)", len(got))
	}
}

// TestAPassWithoutAnOvertimeSlotIsCutOffAtItsDeadline: a pass whose OvertimeSlot refuses it
// cuts its large snapshot off at the deadline, as without a Guard (never asked, nothing stored);
// a pass given the slot goes on, asked, and releases the slot when it ends.
func TestAPassWithoutAnOvertimeSlotIsCutOffAtItsDeadline(t *testing.T) {
	for _, slot := range []bool{false, true} {
		src, dst := overtimeStores(t)
		ot := newOvertime()
		var asked, slots, released atomic.Int32
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // ends the test where nothing cuts it off
		defer cancel()
		past := make(chan struct{})
		prefix, _ := objectstore.EntryPrefix(entry)
		res, _ := replication.Copy(ctx, replication.From{Store: slowSource{Faults: src, key: snapshotKey(0), past: past}, Bucket: "b"},
			replication.To{Store: dst, Bucket: "b"}, prefix, replication.Options{
				Parallelism: 1, Deadline: time.Second, Overtime: ot.seen,
				Guard: func(context.Context) error { asked.Add(1); return nil },
				OvertimeSlot: func() (func(), bool) {
					slots.Add(1)
					close(past) // the source's last bytes come once the deadline has passed
					return func() { released.Add(1) }, slot
				},
			})
		switch {
		case slots.Load() != 1:
			t.Errorf("slot %t: OvertimeSlot asked %d times; want once", slot, slots.Load())
		case !slot && (res.Copied != 0 || len(res.Failed) != 2 || !errors.Is(res.Failed[0].Err, context.DeadlineExceeded) || asked.Load() != 0 || holds(t, dst, snapshotKey(0)) != nil || len(ot.keys) != 0):
			t.Errorf("no slot: %+v, Guard asked %d times, in overtime %v; want the large snapshot cut off, nothing asked or stored", res, asked.Load(), ot.keys)
		case slot && (res.Copied != 1 || asked.Load() < 1 || released.Load() != 1):
			t.Errorf("slot: %+v, Guard asked %d times, released %d times; want the large snapshot copied, asked, released once", res, asked.Load(), released.Load())
		}
	}
}
