// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// testServerSideCopy: a store whose data plane is an objectstore.ServerSideCopier copies the
// listed version of an object to another bucket byte for byte (replacing what the destination
// key held), refuses a source written again after its listing and a source that is gone
// (ErrNotFound), and leaves no object where it refused. Whether a data plane copies is its
// type's word: one without CopyObject skips the case, saying so.
func testServerSideCopy(t *testing.T, h Harness) {
	c, ok := h.Store.DataPlane.(objectstore.ServerSideCopier)
	if !ok {
		t.Skipf("the store's data plane (%T) has no CopyObject", h.Store.DataPlane)
	}
	ctx := ctxFor(t)
	from, to := newBucket(t, h), newBucket(t, h)
	listed := func(key string) objectstore.ObjectVersion {
		t.Helper()
		for _, o := range listAll(t, ctx, h.Store, from, key) {
			if o.Key == key && !o.Noncurrent {
				return o
			}
		}
		t.Fatalf("%s is not listed", key)
		return objectstore.ObjectVersion{}
	}
	first := bytes.Repeat([]byte("first version "), 1000)
	if err := h.Store.PutObject(ctx, from, "copy/src", first); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.PutObject(ctx, to, "copy/dst", []byte("to be replaced")); err != nil {
		t.Fatal(err)
	}
	v1 := listed("copy/src")
	for _, key := range []string{"copy/dst", "copy/new"} {
		if err := c.CopyObject(ctx, from, v1, to, key); err != nil {
			t.Fatalf("CopyObject to %s: %v", key, err)
		}
		if got, err := objectstore.ReadObject(ctx, h.Store, to, key); err != nil || !bytes.Equal(got, first) {
			t.Errorf("%s holds %d bytes (%v); want the %d bytes of the source", key, len(got), err, len(first))
		}
	}

	// Written again after the listing, with other bytes of the same size (the size alone cannot
	// tell). A store whose condition
	// is the write time may know it in whole seconds only: the second write is made in a later
	// second of the wall clock (a simulated clock ticks by request).
	if !h.SimulatedClock {
		time.Sleep(time.Until(v1.Modified.Truncate(time.Second).Add(time.Second + 100*time.Millisecond)))
	}
	second := bytes.Repeat([]byte("second version"), 1000)
	if err := h.Store.PutObject(ctx, from, "copy/src", second); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyObject(ctx, from, v1, to, "copy/stale"); err == nil {
		t.Error("a source written again after its listing was copied")
	}
	if _, err := h.Store.OpenObject(ctx, to, "copy/stale", ""); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a refused copy left an object: %v", err)
	}
	if err := c.CopyObject(ctx, from, listed("copy/src"), to, "copy/fresh"); err != nil {
		t.Fatalf("CopyObject of the new listing: %v", err)
	}
	if got, err := objectstore.ReadObject(ctx, h.Store, to, "copy/fresh"); err != nil || !bytes.Equal(got, second) {
		t.Errorf("copy/fresh holds %d bytes (%v), the new version %t", len(got), err, bytes.Equal(got, second))
	}

	gone := v1
	gone.Key = "copy/gone"
	if err := c.CopyObject(ctx, from, gone, to, "copy/gone"); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a missing source: %v; want ErrNotFound", err)
	}
	if _, err := h.Store.OpenObject(ctx, to, "copy/gone", ""); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a refused copy left an object: %v", err)
	}
}
