// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// clockSlack is how far a listed write time may lie outside the test's own clock readings around
// the write: stand-ins keep times in whole seconds (or coarser), and their clocks are not ours.
const clockSlack = 2 * time.Minute

// testProbe checks that Probe answers nil for an existing bucket, empty or not, ErrBucketNotFound
// for a missing one and a refusal for bad credentials, and that it writes nothing.
func testProbe(t *testing.T, h Harness) {
	ctx := ctxFor(t)
	name := newBucket(t, h)
	if err := h.Store.Probe(ctx, name); err != nil {
		t.Fatalf("Probe of an existing, empty bucket: %v; want nil", err)
	}
	if err := PutMany(ctx, h.Store, name, []string{"p/a", "p/b", "q/c"}); err != nil {
		t.Fatal(err)
	}
	before := listAll(t, ctx, h.Store, name, "")
	if err := h.Store.Probe(ctx, name); err != nil {
		t.Fatalf("Probe of an existing bucket: %v; want nil", err)
	}
	if after := listAll(t, ctx, h.Store, name, ""); !sameVersions(before, after) {
		t.Fatalf("Probe changed the bucket:\nbefore %v\nafter  %v", before, after)
	}
	if err := h.Store.Probe(ctx, h.NewBucketName()); !errors.Is(err, objectstore.ErrBucketNotFound) {
		t.Fatalf("Probe of a missing bucket: %v; want ErrBucketNotFound", err)
	}
	if h.BadCredentials.DataPlane != nil {
		err := h.BadCredentials.Probe(ctx, name)
		if !errors.Is(err, objectstore.ErrUnauthenticated) && !errors.Is(err, objectstore.ErrForbidden) {
			t.Fatalf("Probe with bad credentials: %v; want ErrUnauthenticated or ErrForbidden", err)
		}
	}
}

// sameVersions compares two sorted listings by what names a version and its size (times are
// compared by instant: a store may hand out the same time in another location).
func sameVersions(a, b []objectstore.ObjectVersion) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Version != b[i].Version || a[i].Size != b[i].Size ||
			a[i].Noncurrent != b[i].Noncurrent || !a[i].Modified.Equal(b[i].Modified) {
			return false
		}
	}
	return true
}

// testListingMetadata checks what a listing tells of current objects: their size in bytes, a
// write time around the write, not noncurrent, and a retention (if any) that ends after it.
func testListingMetadata(t *testing.T, h Harness) {
	ctx := ctxFor(t)
	name := newBucket(t, h)
	want := map[string]int{"m/empty": 0, "m/small": 5, "m/bigger": 3000}
	start := time.Now()
	for k, n := range want {
		if err := h.Store.PutObject(ctx, name, k, []byte(strings.Repeat("x", n))); err != nil {
			t.Fatalf("PutObject(%q): %v", k, err)
		}
	}
	end := time.Now()
	listed := listAll(t, ctx, h.Store, name, "m/")
	if len(listed) != len(want) {
		t.Fatalf("listing of %d written objects returned %v", len(want), listed)
	}
	for _, o := range listed {
		checkWritten(t, h, o, want[o.Key], start, end)
		if o.Noncurrent {
			t.Errorf("%q: a current object is listed as noncurrent", o.Key)
		}
	}
}

// checkWritten checks a listed version's size and write time.
func checkWritten(t *testing.T, h Harness, o objectstore.ObjectVersion, size int, start, end time.Time) {
	t.Helper()
	if o.Size != int64(size) {
		t.Errorf("%q %s: listed size %d; %d bytes were written", o.Key, o.Version, o.Size, size)
	}
	if h.SimulatedClock {
		if o.Modified.IsZero() {
			t.Errorf("%q %s: the listing tells no write time", o.Key, o.Version)
		}
	} else if o.Modified.Before(start.Add(-clockSlack)) || o.Modified.After(end.Add(clockSlack)) {
		t.Errorf("%q %s: listed write time %v, not within %v of the write (%v .. %v)", o.Key, o.Version, o.Modified, clockSlack, start, end)
	}
	if !o.RetainUntil.IsZero() && !o.RetainUntil.After(o.Modified) {
		t.Errorf("%q %s: retention until %v does not end after the write time %v", o.Key, o.Version, o.RetainUntil, o.Modified)
	}
}

// testListingMetadataVersioned checks, with versioning on, that an overwritten key lists its
// newest version as current and the older one as noncurrent (each with its own size), and that a
// deleted key lists nothing current: its delete marker (S3, Swift) and its previous version
// (all stores) are noncurrent.
func testListingMetadataVersioned(t *testing.T, h Harness) {
	skipUnsupported(t, h, Versions)
	ctx := ctxFor(t)
	name := newVersionedBucket(t, h)
	// Versioning may be the whole account's (Azure): the cases after this one expect it off.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.Versioning(ctx, name, false); err != nil {
			t.Errorf("cleanup: switching versioning off: %v", err)
		}
	})
	const overwritten, deleted = "v/overwritten", "v/deleted"
	start := time.Now()
	for _, w := range []struct{ key, data string }{{overwritten, "old"}, {overwritten, "the newer one"}, {deleted, "gone soon"}} {
		if err := h.Store.PutObject(ctx, name, w.key, []byte(w.data)); err != nil {
			t.Fatalf("PutObject(%q): %v", w.key, err)
		}
	}
	if objErrs, err := h.Store.DeleteObjects(ctx, name, []objectstore.ObjectVersion{{Key: deleted}}); err != nil || len(objErrs) > 0 {
		t.Fatalf("DeleteObjects of %q = %v, %v", deleted, objErrs, err)
	}
	end := time.Now()

	var current, older []objectstore.ObjectVersion
	for _, o := range listAll(t, ctx, h.Store, name, "v/") {
		switch {
		case o.Key == deleted && !o.Noncurrent:
			t.Errorf("%q %s: a deleted key lists a version as current (delete markers and previous versions are noncurrent)", o.Key, o.Version)
		case o.Key == overwritten && o.Noncurrent:
			older = append(older, o)
		case o.Key == overwritten:
			current = append(current, o)
		}
	}
	if len(current) != 1 {
		t.Fatalf("%q written twice lists %d current versions %v; want 1", overwritten, len(current), current)
	}
	checkWritten(t, h, current[0], len("the newer one"), start, end)
	if len(older) != 1 {
		t.Fatalf("%q written twice lists %d noncurrent versions %v; want 1", overwritten, len(older), older)
	}
	checkWritten(t, h, older[0], len("old"), start, end)
	if older[0].Modified.After(current[0].Modified) {
		t.Errorf("%q: the noncurrent version's write time %v is after the current one's %v", overwritten, older[0].Modified, current[0].Modified)
	}
}
