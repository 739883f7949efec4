// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// deferEntry is the entry the suite writes to; the keys of its cases lie in and around it.
const deferEntry = "shoot--a--b--1/"

var (
	deferKeys       = []string{deferEntry + "etcd-main/v2/Full-a", deferEntry + "etcd-main/v2/Incr-b", deferEntry + "etcd-events/v2/Full-c"}
	deferNeighbours = []string{"shoot--a--b--10/etcd-main/v2/Full-0", "shoot--a--b--1x/y", "other/shoot--a--b--1/z"}
)

// sameNames compares two sorted listings by what names a version (key, version, size, whether
// it is current): a store may touch a version's metadata (a mark, a tag) without writing it.
func sameNames(a, b []objectstore.ObjectVersion) bool {
	return slices.EqualFunc(a, b, func(x, y objectstore.ObjectVersion) bool {
		return x.Key == y.Key && x.Version == y.Version && x.Size == y.Size && x.Noncurrent == y.Noncurrent
	})
}

// testDeferDeletion checks DeferDeletion's contract as far as it can be seen at once: a store
// either cannot defer (ErrUnsupported, and says so every time) or answers nil with the rule the
// operator finds in its console, idempotently; either way it deletes nothing now, inside or
// outside the prefix, every object stays readable, and the prefix can still be deleted (and the
// bucket emptied and deleted) afterwards.
func testDeferDeletion(t *testing.T, h Harness) {
	ctx := ctxFor(t)
	name := newBucket(t, h)
	if err := PutMany(ctx, h.Store, name, append(slices.Clone(deferKeys), deferNeighbours...)); err != nil {
		t.Fatal(err)
	}
	before := listAll(t, ctx, h.Store, name, "")

	first, err := h.Store.DeferDeletion(ctx, name, deferEntry)
	supported := err == nil
	switch {
	case errors.Is(err, objectstore.ErrUnsupported) && !h.unsupported(Deferral):
		t.Fatalf("DeferDeletion = %v; the harness declares deferral supported", err)
	case errors.Is(err, objectstore.ErrUnsupported):
		t.Logf("the store cannot defer deletions: %v", err)
	case err == nil && h.unsupported(Deferral):
		t.Fatal("DeferDeletion answered nil; the harness declares deferral unsupported")
	case err != nil:
		t.Fatalf("DeferDeletion = %v; want nil or ErrUnsupported", err)
	case first.Rule == "":
		t.Fatal("DeferDeletion answered nil without naming its rule")
	}
	second, err := h.Store.DeferDeletion(ctx, name, deferEntry)
	switch {
	case supported && err != nil:
		t.Fatalf("DeferDeletion again = %v; want nil (idempotent)", err)
	case supported && second.Rule != first.Rule:
		t.Fatalf("DeferDeletion again names rule %q, first %q; want the same", second.Rule, first.Rule)
	case !supported && !errors.Is(err, objectstore.ErrUnsupported):
		t.Fatalf("DeferDeletion again = %v; the first call said ErrUnsupported", err)
	}

	if after := listAll(t, ctx, h.Store, name, ""); !sameNames(before, after) {
		t.Fatalf("DeferDeletion changed the bucket's versions:\nbefore %v\nafter  %v", before, after)
	}
	for _, k := range append(slices.Clone(deferKeys), deferNeighbours...) {
		if data, err := objectstore.ReadObject(ctx, h.Store, name, k); err != nil || string(data) != "data of "+k {
			t.Fatalf("reading %q after DeferDeletion = %q, %v", k, data, err)
		}
	}

	prefix, err := objectstore.EntryPrefix(strings.TrimSuffix(deferEntry, "/"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := objectstore.DeletePrefix(ctx, h.Store, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Locked != 0 {
		t.Fatalf("DeletePrefix after DeferDeletion = %+v, %v; want done, nothing locked", res, err)
	}
	if left := listAll(t, ctx, h.Store, name, deferEntry); len(left) != 0 {
		t.Fatalf("after DeletePrefix %v are left under %q", left, deferEntry)
	}
	if after := outsideEntry(listAll(t, ctx, h.Store, name, "")); !sameNames(after, outsideEntry(before)) {
		t.Fatalf("outside %q before %v, after %v", deferEntry, outsideEntry(before), after)
	}
}

// lockSlack is how far a reported lock expiry may lie from the one set: stores keep seconds.
const lockSlack = time.Second

// testLockedObjects checks a deletion of a prefix holding objects under retention locks: it
// completes (Done: nothing deletable is left), counts the locked versions with the earliest
// and latest expiry, deletes everything else and never the locked objects, and a second pass
// finds the same; handing them to DeferDeletion leaves them in place. The locks are lifted
// (Unlock) or waited out before the bucket goes.
func testLockedObjects(t *testing.T, h Harness) {
	skipUnsupported(t, h, Locks)
	ctx := ctxFor(t)
	var name string
	if h.LockableBucket == nil {
		name = newBucket(t, h)
	} else {
		name = h.LockableBucket(t)
		t.Cleanup(func() { deleteBucket(t, h, name) })
	}
	if err := PutMany(ctx, h.Store, name, append(slices.Clone(deferKeys), deferNeighbours...)); err != nil {
		t.Fatal(err)
	}
	lockFor := 2 * time.Second
	if h.Unlock != nil {
		lockFor = 2 * time.Hour
	}
	earliest := time.Now().Add(lockFor).Truncate(time.Second)
	latest := earliest.Add(lockFor / 2)
	// Registered after newBucket's cleanup, so run before it: the bucket can then be emptied.
	t.Cleanup(func() {
		if h.Unlock == nil {
			time.Sleep(time.Until(latest.Add(lockSlack)))
			return
		}
		for _, k := range deferKeys[:2] {
			if err := h.Unlock(ctxFor(t), name, k); err != nil {
				t.Errorf("Unlock(%q): %v", k, err)
			}
		}
	})
	for k, until := range map[string]time.Time{deferKeys[0]: earliest, deferKeys[1]: latest} {
		if err := h.Lock(ctx, name, k, until); err != nil {
			t.Fatalf("Lock(%q): %v", k, err)
		}
	}
	outside := outsideEntry(listAll(t, ctx, h.Store, name, ""))
	prefix, err := objectstore.EntryPrefix(strings.TrimSuffix(deferEntry, "/"))
	if err != nil {
		t.Fatal(err)
	}
	near := func(got, want time.Time) bool { return got.Sub(want).Abs() <= lockSlack }
	for pass := 1; pass <= 2; pass++ {
		res, err := objectstore.DeletePrefix(ctx, h.Store, name, prefix, objectstore.DeleteOptions{})
		if err != nil {
			t.Fatalf("pass %d: DeletePrefix = %v; locked objects are no failure", pass, err)
		}
		if !res.Done || res.Locked != 2 || !near(res.EarliestRetainUntil, earliest) || !near(res.LatestRetainUntil, latest) {
			t.Fatalf("pass %d: %+v; want done with 2 locked, held until %s and %s", pass, res, earliest.UTC().Format(time.RFC3339), latest.UTC().Format(time.RFC3339))
		}
		if pass == 2 && res.Deleted != 0 {
			t.Fatalf("pass 2 deleted %d versions; want none (the first deleted all it could)", res.Deleted)
		}
		left, err := ListKeys(ctx, h.Store, name, deferEntry)
		if err != nil {
			t.Fatal(err)
		}
		if want := slices.Sorted(slices.Values(deferKeys[:2])); !slices.Equal(left, want) {
			t.Fatalf("pass %d: left under %q %v; want exactly the locked %v", pass, deferEntry, left, want)
		}
	}
	// What the entry controller does next: hand the locked objects to the store, which deletes
	// nothing now.
	if _, err := h.Store.DeferDeletion(ctx, name, deferEntry); err != nil && !errors.Is(err, objectstore.ErrUnsupported) {
		t.Fatalf("DeferDeletion of the locked objects = %v; want nil or ErrUnsupported", err)
	}
	for _, k := range deferKeys[:2] {
		if data, err := objectstore.ReadObject(ctx, h.Store, name, k); err != nil || string(data) != "data of "+k {
			t.Fatalf("locked object %q after the deletion and its deferral = %q, %v; want it intact", k, data, err)
		}
	}
	if after := outsideEntry(listAll(t, ctx, h.Store, name, "")); !sameNames(after, outside) {
		t.Fatalf("outside %q before %v, after %v", deferEntry, outside, after)
	}
}

// testDeleteMarkers checks delete markers on a versioned bucket: a plain delete of a current
// object leaves it unreadable but listed (a delete marker, or its data as a noncurrent version),
// with nothing current; DeletePrefix removes every version and marker under the prefix, and a
// neighbour's marker and versions stay as they were.
func testDeleteMarkers(t *testing.T, h Harness) {
	skipUnsupported(t, h, Versions)
	ctx := ctxFor(t)
	name := newVersionedBucket(t, h)
	for _, k := range append(slices.Clone(deferKeys), deferNeighbours...) {
		if err := h.Store.PutObject(ctx, name, k, []byte("data of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	deleted := []string{deferKeys[0], deferNeighbours[0]}
	if objErrs, err := h.Store.DeleteObjects(ctx, name, []objectstore.ObjectVersion{{Key: deleted[0]}, {Key: deleted[1]}}); err != nil || len(objErrs) > 0 {
		t.Fatalf("DeleteObjects of current objects = %v, %v", objErrs, err)
	}
	for _, k := range deleted {
		if _, err := objectstore.ReadObject(ctx, h.Store, name, k); !errors.Is(err, objectstore.ErrNotFound) {
			t.Fatalf("reading %q after its deletion: %v; want ErrNotFound", k, err)
		}
		versions := slices.DeleteFunc(listAll(t, ctx, h.Store, name, k), func(o objectstore.ObjectVersion) bool { return o.Key != k })
		if len(versions) == 0 {
			t.Fatalf("a deleted object %q on a versioned bucket left nothing listed; want its delete marker or noncurrent data", k)
		}
		for _, o := range versions {
			if !o.Noncurrent {
				t.Fatalf("%q deleted, but its version %+v is listed as current", k, o)
			}
		}
		if !slices.ContainsFunc(versions, func(o objectstore.ObjectVersion) bool { return o.Size == int64(len("data of "+k)) }) {
			t.Fatalf("%q deleted on a versioned bucket: %+v; want its data kept as a noncurrent version", k, versions)
		}
	}
	outside := outsideEntry(listAll(t, ctx, h.Store, name, ""))
	prefix, err := objectstore.EntryPrefix(strings.TrimSuffix(deferEntry, "/"))
	if err != nil {
		t.Fatal(err)
	}
	deleteUntilDone(t, ctx, h.Store, name, prefix, objectstore.DeleteOptions{})
	if left := listAll(t, ctx, h.Store, name, deferEntry); len(left) != 0 {
		t.Fatalf("after DeletePrefix %v are left under %q; want no version and no delete marker", left, deferEntry)
	}
	if after := outsideEntry(listAll(t, ctx, h.Store, name, "")); !sameNames(after, outside) {
		t.Fatalf("outside %q before %v, after %v", deferEntry, outside, after)
	}
	if _, err := objectstore.ReadObject(ctx, h.Store, name, deferNeighbours[0]); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("the neighbour's delete marker is gone: reading it: %v", err)
	}
}
