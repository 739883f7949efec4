// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// testConditionalWrite: the store's Writer is an objectstore.ConditionalWriter (and its data
// plane, where it copies, an objectstore.ConditionalCopier). A write that requires the key to be
// missing (objectstore.GuardAbsent) succeeds on a missing key and fails with
// ErrPreconditionFailed on an existing one, which keeps its content; a write that requires the
// listed version (objectstore.GuardVersion) succeeds over that version and fails once the key was
// written again (same size, other bytes) or deleted. A refused write leaves nothing in the bucket
// (no object, no segment), for an object written in one request and, with
// Harness.LargeStreamBytes, one written in several. A kind the store declares it does not
// enforce (objectstore.PartialWriteGuard, PartialCopyGuard) is skipped for that kind only, and
// must be refused with ErrUnsupported, writing nothing.
func testConditionalWrite(t *testing.T, h Harness) {
	w, ok := h.Store.Writer.(objectstore.ConditionalWriter)
	if !ok {
		t.Fatalf("the store's Writer (%T) has no PutObjectStreamIf", h.Store.Writer)
	}
	sizes := []int64{8}
	if h.LargeStreamBytes > 0 {
		sizes = append(sizes, h.LargeStreamBytes)
	}
	for _, size := range sizes {
		t.Run(fmt.Sprintf("Stream/%dBytes", size), func(t *testing.T) {
			ctx := ctxFor(t)
			name := newBucket(t, h)
			put := func(key, content string, cond objectstore.Precondition) error {
				data := fill(content, size)
				return w.PutObjectStreamIf(ctx, name, key, bytes.NewReader(data), size, cond)
			}
			checkConditional(t, ctx, h, name, func(c objectstore.Precondition) bool { return objectstore.WriteGuarded(w, c) }, size, put)
		})
	}
	c, ok := h.Store.DataPlane.(objectstore.ServerSideCopier)
	if !ok {
		return
	}
	cc, ok := c.(objectstore.ConditionalCopier)
	if !ok {
		t.Fatalf("the store's data plane (%T) copies but has no CopyObjectIf", h.Store.DataPlane)
	}
	t.Run("Copy", func(t *testing.T) {
		ctx := ctxFor(t)
		name := newBucket(t, h)
		put := func(key, content string, cond objectstore.Precondition) error {
			src := "src/" + content
			if err := h.Store.PutObject(ctx, name, src, fill(content, 8)); err != nil {
				t.Fatal(err)
			}
			return cc.CopyObjectIf(ctx, name, listed(t, ctx, h, name, src), name, key, cond)
		}
		checkConditional(t, ctx, h, name, func(c objectstore.Precondition) bool { return objectstore.CopyGuarded(cc, c) }, 8, put)
	})
}

// checkConditional runs the conditional cases with put, which writes content (filled to size
// bytes) to key under cond; guarded says which kinds of condition put's store enforces.
func checkConditional(t *testing.T, ctx context.Context, h Harness, name string, guarded func(objectstore.Precondition) bool, size int64,
	put func(key, content string, cond objectstore.Precondition) error) {
	t.Helper()
	// refused checks that write fails with want and leaves the bucket's listing under cond/ as it
	// was (no object, no segment of its own; a static large object's segments of an object
	// written before stay).
	refused := func(what string, want error, write func() error) {
		t.Helper()
		before := listAll(t, ctx, h.Store, name, "cond/")
		if err := write(); !errors.Is(err, want) {
			t.Errorf("%s: %v; want %v", what, err, want)
		}
		if after := listAll(t, ctx, h.Store, name, "cond/"); !slices.EqualFunc(before, after, sameVersion) {
			t.Errorf("%s left the bucket changed: %v; was %v", what, keysOf(after), keysOf(before))
		}
	}
	absent, version := objectstore.Precondition{}, objectstore.Precondition{Replaces: &objectstore.ObjectVersion{Key: "cond/unguarded"}}
	for _, cond := range []objectstore.Precondition{absent, version} {
		if !guarded(cond) {
			refused(fmt.Sprintf("a write of a kind the store does not guard (%s)", cond.Guard()), objectstore.ErrUnsupported,
				func() error { return put("cond/unguarded", "refused", cond) })
		}
	}
	read := func(key string) string {
		t.Helper()
		got, err := objectstore.ReadObject(ctx, h.Store, name, key)
		if err != nil {
			t.Fatalf("reading %s: %v", key, err)
		}
		if int64(len(got)) != size {
			t.Fatalf("%s holds %d bytes; want %d", key, len(got), size)
		}
		return string(bytes.TrimRight(got[:min(len(got), 8)], "\x00"))
	}
	if guarded(absent) {
		if err := put("cond/absent", "first", absent); err != nil {
			t.Fatalf("a write that requires a missing key, to a missing key: %v", err)
		}
		refused("a write that requires a missing key, to an existing key", objectstore.ErrPreconditionFailed,
			func() error { return put("cond/absent", "again", absent) })
		if got := read("cond/absent"); got != "first" {
			t.Errorf("cond/absent holds %q; want the first write kept", got)
		}
	} else {
		t.Logf("the store does not guard %s: skipped", objectstore.GuardAbsent)
	}
	if !guarded(version) {
		t.Logf("the store does not guard %s: skipped", objectstore.GuardVersion)
		return
	}
	if err := h.Store.PutObject(ctx, name, "cond/version", fill("zeroth", size)); err != nil {
		t.Fatal(err)
	}
	v0 := listed(t, ctx, h, name, "cond/version")
	if err := put("cond/version", "first", objectstore.Precondition{Replaces: &v0}); err != nil {
		t.Fatalf("a write that requires the listed version, over it: %v", err)
	}
	v1 := listed(t, ctx, h, name, "cond/version")
	// Written again by someone else with other bytes of the same size. A store that tells a
	// version by its write time may know it in whole seconds only: that write is made in a later
	// second of the wall clock (a simulated clock ticks by request).
	if !h.SimulatedClock {
		time.Sleep(time.Until(v1.Modified.Truncate(time.Second).Add(time.Second + 100*time.Millisecond)))
	}
	if err := h.Store.PutObject(ctx, name, "cond/version", fill("other", size)); err != nil {
		t.Fatal(err)
	}
	refused("a write that requires a replaced version", objectstore.ErrPreconditionFailed,
		func() error { return put("cond/version", "stale", objectstore.Precondition{Replaces: &v1}) })
	if got := read("cond/version"); got != "other" {
		t.Errorf("cond/version holds %q; want the other writer's kept", got)
	}
	refused("a write that requires a version, to a missing key", objectstore.ErrPreconditionFailed,
		func() error { return put("cond/gone", "gone", objectstore.Precondition{Replaces: &v1}) })
}

// sameVersion tells the same listed version.
func sameVersion(a, b objectstore.ObjectVersion) bool {
	return a.Key == b.Key && a.Version == b.Version && a.Size == b.Size && a.Modified.Equal(b.Modified) && a.ETag == b.ETag
}

// keysOf are the listed versions' keys.
func keysOf(vs []objectstore.ObjectVersion) []string {
	var keys []string
	for _, v := range vs {
		keys = append(keys, v.Key)
	}
	return keys
}

// fill is content followed by zeros up to size bytes.
func fill(content string, size int64) []byte {
	return append([]byte(content), make([]byte, size-int64(len(content)))...)
}

// listed is key's current version as the store lists it.
func listed(t *testing.T, ctx context.Context, h Harness, bucket, key string) objectstore.ObjectVersion {
	t.Helper()
	for _, o := range listAll(t, ctx, h.Store, bucket, key) {
		if o.Key == key && !o.Noncurrent {
			return o
		}
	}
	t.Fatalf("%s is not listed", key)
	return objectstore.ObjectVersion{}
}
