// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

type versioningMode int

const (
	versioningOff versioningMode = iota
	versioningOn
	versioningSwitchedOff
)

// testDeletionLeavesNothing checks the property every entry deletion rests on: after DeletePrefix
// reports Done, a complete listing under `<entry>/` (every version, delete marker, noncurrent
// generation and snapshot) is empty, and nothing outside the prefix changed -- with versioning
// off, on, and switched off after it was on. Listings run with small pages where the harness
// has them, so that page boundaries fall in the middle of one key's versions.
func testDeletionLeavesNothing(mode versioningMode) func(*testing.T, Harness) {
	return func(t *testing.T, h Harness) {
		if mode != versioningOff {
			skipUnsupported(t, h, Versions)
		}
		ctx := ctxFor(t)
		name := newBucket(t, h)
		var store objectstore.DataPlane = h.Store
		if h.SmallPages != nil {
			store = h.SmallPages
		}
		if mode != versioningOff {
			if err := h.Versioning(ctx, name, true); err != nil {
				t.Fatalf("switching versioning on: %v", err)
			}
		}
		const entry = deferEntry
		keys := []string{
			entry + "etcd-main/v2/Full-00000001-00000010-1700000000",
			entry + "etcd-main/v2/Incr-00000011-00000020-1700000100",
			entry + "etcd-main/v2/Incr-00000021-00000030-1700000200",
			entry + "etcd-main/v2/Full-00000001-00000030-1700000300.gz",
		}
		neighbours := []string{"shoot--a--b--10/etcd-main/v2/Full-0", "shoot--a--b--1x/y", "other/shoot--a--b--1/z"}

		// Three versions of every key, one write after the other so that each makes a version.
		written := 0
		put := func(key, data string) {
			t.Helper()
			if err := h.Store.PutObject(ctx, name, key, []byte(data)); err != nil {
				t.Fatalf("PutObject(%q): %v", key, err)
			}
			if strings.HasPrefix(key, entry) {
				written++
			}
		}
		for round := range 3 {
			for _, k := range append(slices.Clone(keys), neighbours...) {
				put(k, fmt.Sprintf("version %d of %s", round, k))
			}
		}
		// A plain delete of a current object: a delete marker (S3, Swift) or a noncurrent
		// version (GCS, Azure) on a versioned store; then a key written again over it. A
		// neighbour gets a delete marker too, which must survive.
		del := []objectstore.ObjectVersion{{Key: keys[0]}, {Key: keys[1]}, {Key: neighbours[0]}}
		if objErrs, err := h.Store.DeleteObjects(ctx, name, del); err != nil || len(objErrs) > 0 {
			t.Fatalf("DeleteObjects of current objects = %v, %v", objErrs, err)
		}
		put(keys[1], "written again after its deletion")
		if mode == versioningSwitchedOff {
			if err := h.Versioning(ctx, name, false); err != nil {
				t.Fatalf("switching versioning off: %v", err)
			}
		}

		before := listAll(t, ctx, store, name, entry)
		switch mode {
		case versioningOff:
			var live []string
			for _, o := range before {
				live = append(live, o.Key)
			}
			want := slices.Sorted(slices.Values(keys[1:]))
			if !slices.Equal(live, want) {
				t.Fatalf("without versioning the listing under %q is %v; want the live keys %v", entry, live, want)
			}
		default:
			if len(before) < written {
				t.Fatalf("after %d writes under %q with versioning on the listing shows %d versions: it does not list every version", written, entry, len(before))
			}
		}
		outside := outsideEntry(listAll(t, ctx, h.Store, name, ""))

		prefix, err := objectstore.EntryPrefix("shoot--a--b--1")
		if err != nil {
			t.Fatal(err)
		}
		deleteUntilDone(t, ctx, store, name, prefix, objectstore.DeleteOptions{Parallelism: 2})
		for _, s := range []objectstore.DataPlane{store, h.Store} {
			if left := listAll(t, ctx, s, name, entry); len(left) > 0 {
				t.Fatalf("DeletePrefix reported done, but %d versions are left under %q: %v", len(left), entry, left)
			}
		}
		if after := outsideEntry(listAll(t, ctx, h.Store, name, "")); !slices.Equal(after, outside) {
			t.Fatalf("the deletion changed what lies outside %q:\nbefore %v\nafter  %v", entry, outside, after)
		}
	}
}

// listAll returns every version under prefix, sorted by key and version.
func listAll(t *testing.T, ctx context.Context, store objectstore.DataPlane, bucket, prefix string) []objectstore.ObjectVersion {
	t.Helper()
	var all []objectstore.ObjectVersion
	err := store.ListObjects(ctx, bucket, prefix, func(page []objectstore.ObjectVersion) error {
		all = append(all, page...)
		return nil
	})
	if err != nil {
		t.Fatalf("listing %q: %v", prefix, err)
	}
	slices.SortFunc(all, func(a, b objectstore.ObjectVersion) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(a.Version, b.Version))
	})
	return all
}

// outsideEntry is what of all lies outside the entry the suite writes to (deferEntry).
func outsideEntry(all []objectstore.ObjectVersion) []objectstore.ObjectVersion {
	return slices.DeleteFunc(all, func(o objectstore.ObjectVersion) bool { return strings.HasPrefix(o.Key, deferEntry) })
}
