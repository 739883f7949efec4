// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// refusingCopier is a destination store's server-side copy that cannot read the source: every
// call returns err, counted.
type refusingCopier struct {
	err   error
	calls atomic.Int64
}

func (c *refusingCopier) CopyObject(context.Context, string, objectstore.ObjectVersion, string, string) error {
	c.calls.Add(1)
	return c.err
}

// TestCopyStreamsWhereTheStoreRefusesServerSide: a destination whose credentials may not read the
// source (ErrForbidden) or whose store has no such source bucket (ErrBucketNotFound), or in which
// the source's objects are not found although the stream reads them (another endpoint with a
// bucket of the source's name): the first object is tried once, every object is streamed, and the
// refusal is reported.
func TestCopyStreamsWhereTheStoreRefusesServerSide(t *testing.T) {
	for _, refusal := range []error{
		fmt.Errorf("copying: %w: AccessDenied", objectstore.ErrForbidden),
		fmt.Errorf("copying: %w: NoSuchBucket", objectstore.ErrBucketNotFound),
		fmt.Errorf("copying: %w: NoSuchKey", objectstore.ErrNotFound),
	} {
		src, dst := stores(t, 5)
		copier := &refusingCopier{err: refusal}
		prefix, _ := objectstore.EntryPrefix(entry)
		res, err := replication.Copy(context.Background(), replication.From{Store: src, Bucket: "b"}, replication.To{Store: dst, Bucket: "b", Copier: copier}, prefix, replication.Options{ServerSideMinBytes: -1})
		if err != nil || res.Copied != 5 || res.Streamed != 5 || res.ServerSide != 0 || !res.Done() || res.Vanished != 0 {
			t.Errorf("%v: %+v, %v; want 5 streamed, done", refusal, res, err)
		}
		if copier.calls.Load() != 1 {
			t.Errorf("%v: %d server-side attempts; want 1 (the pass's first object)", refusal, copier.calls.Load())
		}
		if !errors.Is(res.ServerSideRefused, refusal) {
			t.Errorf("%v: ServerSideRefused = %v; want the refusal", refusal, res.ServerSideRefused)
		}
		if got := len(keys(t, dst)); got != 5 {
			t.Errorf("%v: the destination holds %d objects; want 5", refusal, got)
		}
	}
}

// TestCopyServerSideReportsIt: where the server-side copy works, every object is copied inside
// the store, none is read through the engine, and nothing is refused.
func TestCopyServerSideReportsIt(t *testing.T) {
	ctx := context.Background()
	src, _ := stores(t, 6)
	if err := src.EnsureBucket(ctx, objectstore.Bucket{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	copier := &recordingCopier{store: src}
	prefix, _ := objectstore.EntryPrefix(entry)
	res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: "b"}, replication.To{Store: src, Bucket: "c", Copier: copier}, prefix, replication.Options{Parallelism: 3, ServerSideMinBytes: -1})
	if err != nil || res.ServerSide != 6 || res.Streamed != 0 || res.ServerSideRefused != nil || src.Calls(memstore.OpOpenObject) != 0 {
		t.Errorf("%+v, %v, %d reads; want 6 server-side, none streamed or refused, no reads", res, err, src.Calls(memstore.OpOpenObject))
	}
}

// vanishingCopier copies inside one memstore, except that the first object it is asked for is
// deleted from the source just before (etcd-backup-restore's garbage collection between the
// listing and the copy).
type vanishingCopier struct {
	recordingCopier

	first atomic.Bool
}

func (c *vanishingCopier) CopyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string) error {
	if c.first.CompareAndSwap(false, true) {
		if _, err := c.store.DeleteObjects(ctx, srcBucket, []objectstore.ObjectVersion{src}); err != nil {
			return err
		}
	}
	return c.recordingCopier.CopyObject(ctx, srcBucket, src, dstBucket, dstKey)
}

// TestCopyAVanishedFirstObjectDecidesNothing: the first object tried server-side is gone (not
// found inside the store, and not found by the stream either): it is counted as vanished, and the
// next object is tried server-side, which works for the rest.
func TestCopyAVanishedFirstObjectDecidesNothing(t *testing.T) {
	ctx := context.Background()
	src, _ := stores(t, 4)
	if err := src.EnsureBucket(ctx, objectstore.Bucket{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	copier := &vanishingCopier{recordingCopier: recordingCopier{store: src}}
	prefix, _ := objectstore.EntryPrefix(entry)
	res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: "b"}, replication.To{Store: src, Bucket: "c", Copier: copier}, prefix, replication.Options{ServerSideMinBytes: -1})
	if err != nil || res.Vanished != 1 || res.ServerSide != 3 || res.Streamed != 0 || res.ServerSideRefused != nil {
		t.Errorf("%+v, %v; want 1 vanished, 3 server-side, none streamed or refused", res, err)
	}
}

// TestCopyServerSideKeepsAKeyWrittenMeanwhile: the server-side copy is conditioned as the stream
// is; a destination key that changed since the listing is not overwritten in either mode.
func TestCopyServerSideKeepsAKeyWrittenMeanwhile(t *testing.T) {
	ctx := context.Background()
	src, _ := stores(t, 1)
	if err := src.EnsureBucket(ctx, objectstore.Bucket{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	copier := &conditionalCopier{store: src}
	prefix, _ := objectstore.EntryPrefix(entry)
	res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: "b"}, replication.To{Store: racingDestination{Faults: src, key: snapshotKey(0), data: "written meanwhile"}, Bucket: "c", Copier: copier}, prefix, replication.Options{ServerSideMinBytes: -1})
	if err != nil || len(res.WriteConflicts) != 1 || res.Copied != 0 || res.Unguarded != 0 {
		t.Fatalf("%+v, %v; want one write conflict, nothing copied, nothing unguarded", res, err)
	}
	if got, _ := objectstore.ReadObject(ctx, src, "c", snapshotKey(0)); string(got) != "written meanwhile" {
		t.Errorf("the destination's key holds %q; want what was written meanwhile", got)
	}
}

// conditionalCopier copies inside one memstore with the destination's precondition.
type conditionalCopier struct{ store *memstore.Faults }

func (c *conditionalCopier) CopyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string) error {
	return c.CopyObjectIf(ctx, srcBucket, src, dstBucket, dstKey, objectstore.Precondition{})
}

func (c *conditionalCopier) CopyObjectIf(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string, cond objectstore.Precondition) error {
	data, err := objectstore.ReadObject(ctx, c.store.Store, srcBucket, src.Key)
	if err != nil {
		return err
	}
	return c.store.PutObjectStreamIf(ctx, dstBucket, dstKey, bytes.NewReader(data), int64(len(data)), cond)
}

// unguardedCopier copies inside one memstore but guards no precondition (as Swift, whose copy
// applies conditional headers to its source): it declares so (objectstore.PartialCopyGuard).
type unguardedCopier struct{ conditionalCopier }

func (unguardedCopier) CopyGuards(objectstore.Guard) bool { return false }

// TestCopyStreamsWhatOnlyTheStreamGuards: where the copy inside the store cannot guard a key's
// precondition and the streamed write can (openstack, a key the copy lacks), the object is
// streamed, guarded: a key written meanwhile is kept (a write conflict), nothing is counted
// unguarded, and nothing is copied inside.
func TestCopyStreamsWhatOnlyTheStreamGuards(t *testing.T) {
	ctx := context.Background()
	src, _ := stores(t, 3)
	if err := src.EnsureBucket(ctx, objectstore.Bucket{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	raced := snapshotKey(1)
	copier := &unguardedCopier{conditionalCopier{store: src}}
	prefix, _ := objectstore.EntryPrefix(entry)
	res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: "b"}, replication.To{Store: racingDestination{Faults: src, key: raced, data: "written meanwhile"}, Bucket: "c", Copier: copier}, prefix, replication.Options{ServerSideMinBytes: -1})
	if err != nil || res.Copied != 2 || res.Streamed != 2 || res.ServerSide != 0 || len(res.WriteConflicts) != 1 || res.Unguarded != 0 {
		t.Fatalf("%+v, %v; want 2 streamed, one write conflict, nothing copied inside or unguarded", res, err)
	}
	if got, _ := objectstore.ReadObject(ctx, src, "c", raced); string(got) != "written meanwhile" {
		t.Errorf("the destination's key holds %q; want what was written meanwhile", got)
	}
}

// TestCopyStreamsSnapshotsBelowTheServerSideThreshold: objects smaller than
// Options.ServerSideMinBytes are streamed and never tried inside the store, so a pass of deltas
// only spends no refused attempt; a larger one is tried and, where the store copies it, copied
// inside.
func TestCopyStreamsSnapshotsBelowTheServerSideThreshold(t *testing.T) {
	ctx := context.Background()
	prefix, _ := objectstore.EntryPrefix(entry)
	withLargeFull := func(t *testing.T) *memstore.Faults {
		src, _ := stores(t, 6) // 10 bytes each
		if err := src.PutObject(ctx, "b", snapshotKey(0), bytes.Repeat([]byte("f"), 100)); err != nil {
			t.Fatal(err)
		}
		if err := src.EnsureBucket(ctx, objectstore.Bucket{Name: "c"}); err != nil {
			t.Fatal(err)
		}
		return src
	}
	t.Run("granted", func(t *testing.T) {
		src := withLargeFull(t)
		copier := &recordingCopier{store: src}
		res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: "b"}, replication.To{Store: src, Bucket: "c", Copier: copier}, prefix, replication.Options{ServerSideMinBytes: 50})
		if err != nil || !res.Done() || res.Copied != 6 || res.ServerSide != 1 || res.Streamed != 5 || copier.copies.Load() != 1 || res.ServerSideRefused != nil {
			t.Errorf("%+v, %v, %d copies inside; want the full snapshot inside, 5 deltas streamed", res, err, copier.copies.Load())
		}
	})
	t.Run("not granted", func(t *testing.T) {
		src := withLargeFull(t)
		copier := &refusingCopier{err: objectstore.ErrForbidden}
		res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: "b"}, replication.To{Store: src, Bucket: "c", Copier: copier}, prefix, replication.Options{ServerSideMinBytes: 50})
		if err != nil || !res.Done() || res.Streamed != 6 || copier.calls.Load() != 1 || !errors.Is(res.ServerSideRefused, objectstore.ErrForbidden) {
			t.Errorf("%+v, %v, %d attempts; want the full snapshot tried once, all 6 streamed, the refusal", res, err, copier.calls.Load())
		}
	})
	t.Run("deltas only, not granted", func(t *testing.T) {
		src, _ := stores(t, 6)
		if err := src.EnsureBucket(ctx, objectstore.Bucket{Name: "c"}); err != nil {
			t.Fatal(err)
		}
		copier := &refusingCopier{err: objectstore.ErrForbidden}
		res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: "b"}, replication.To{Store: src, Bucket: "c", Copier: copier}, prefix, replication.Options{})
		if err != nil || !res.Done() || res.Streamed != 6 || copier.calls.Load() != 0 || res.ServerSideRefused != nil {
			t.Errorf("%+v, %v, %d attempts; want all 6 streamed under the default threshold, none tried, no refusal", res, err, copier.calls.Load())
		}
	})
}
