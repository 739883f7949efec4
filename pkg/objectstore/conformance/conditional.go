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
// enforce (objectstore.PartialGuard) is skipped for that kind only, and must be refused with
// ErrUnsupported, writing nothing.
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
			checkConditional(t, ctx, h, name, w, size, put)
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
		checkConditional(t, ctx, h, name, cc, 8, put)
	})
}

// checkConditional runs the conditional cases with put, which writes content (filled to size
// bytes) to key under cond; guards is the ConditionalWriter or ConditionalCopier put uses.
func checkConditional(t *testing.T, ctx context.Context, h Harness, name string, guards any, size int64,
	put func(key, content string, cond objectstore.Precondition) error) {
	t.Helper()
	absent, version := objectstore.Precondition{}, objectstore.Precondition{Replaces: &objectstore.ObjectVersion{Key: "cond/unguarded"}}
	for _, cond := range []objectstore.Precondition{absent, version} {
		if objectstore.Guards(guards, cond) {
			continue
		}
		if err := put("cond/unguarded", "refused", cond); !errors.Is(err, objectstore.ErrUnsupported) {
			t.Errorf("a write of a kind the store does not guard (%s): %v; want ErrUnsupported", cond.Guard(), err)
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
	keys := []string{}
	if objectstore.Guards(guards, absent) {
		if err := put("cond/absent", "first", absent); err != nil {
			t.Fatalf("a write that requires a missing key, to a missing key: %v", err)
		}
		if err := put("cond/absent", "again", absent); !errors.Is(err, objectstore.ErrPreconditionFailed) {
			t.Errorf("a write that requires a missing key, to an existing key: %v; want ErrPreconditionFailed", err)
		}
		if got := read("cond/absent"); got != "first" {
			t.Errorf("cond/absent holds %q; want the first write kept", got)
		}
		keys = append(keys, "cond/absent")
	} else {
		t.Logf("the store does not guard %s: skipped", objectstore.GuardAbsent)
	}
	if objectstore.Guards(guards, version) {
		if err := h.Store.PutObject(ctx, name, "cond/version", fill("zeroth", size)); err != nil {
			t.Fatal(err)
		}
		v0 := listed(t, ctx, h, name, "cond/version")
		if err := put("cond/version", "first", objectstore.Precondition{Replaces: &v0}); err != nil {
			t.Fatalf("a write that requires the listed version, over it: %v", err)
		}
		v1 := listed(t, ctx, h, name, "cond/version")
		// Written again by someone else with other bytes of the same size. A store that tells a
		// version by its write time may know it in whole seconds only: that write is made in a
		// later second of the wall clock (a simulated clock ticks by request).
		if !h.SimulatedClock {
			time.Sleep(time.Until(v1.Modified.Truncate(time.Second).Add(time.Second + 100*time.Millisecond)))
		}
		if err := h.Store.PutObject(ctx, name, "cond/version", fill("other", size)); err != nil {
			t.Fatal(err)
		}
		if err := put("cond/version", "stale", objectstore.Precondition{Replaces: &v1}); !errors.Is(err, objectstore.ErrPreconditionFailed) {
			t.Errorf("a write that requires a replaced version: %v; want ErrPreconditionFailed", err)
		}
		if got := read("cond/version"); got != "other" {
			t.Errorf("cond/version holds %q; want the other writer's kept", got)
		}
		if err := put("cond/gone", "gone", objectstore.Precondition{Replaces: &v1}); !errors.Is(err, objectstore.ErrPreconditionFailed) {
			t.Errorf("a write that requires a version, to a missing key: %v; want ErrPreconditionFailed", err)
		}
		keys = append(keys, "cond/version")
	} else {
		t.Logf("the store does not guard %s: skipped", objectstore.GuardVersion)
	}
	var left []string
	for _, o := range listAll(t, ctx, h.Store, name, "cond/") {
		if !o.Noncurrent && !slices.Contains(left, o.Key) {
			left = append(left, o.Key)
		}
	}
	if !slices.Equal(left, keys) {
		t.Errorf("the bucket holds %v under cond/; want only %v (a refused write left something)", left, keys)
	}
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
