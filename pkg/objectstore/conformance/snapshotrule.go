// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// testSnapshotRule: every store states how etcd-backup-restore lists it, for an existing bucket,
// and names where the rule comes from.
func testSnapshotRule(t *testing.T, h Harness) {
	ctx := ctxFor(t)
	name := newBucket(t, h)
	rule, err := h.Store.SnapshotRule(ctx, name)
	if err != nil {
		t.Fatalf("SnapshotRule(%q): %v", name, err)
	}
	if rule.Source == "" {
		t.Errorf("SnapshotRule %+v names no source", rule)
	}
	if rule.Exclusion == objectstore.ExcludeMarkedIfDeleted && rule.MarkOf == nil {
		t.Errorf("SnapshotRule %+v reads exclude marks by request but has no MarkOf", rule)
	}
}

// testOpenListedVersions: with versioning on, OpenObject reads every version the listing
// reports by its Version, the old one included, and "" reads the current one.
func testOpenListedVersions(t *testing.T, h Harness) {
	skipUnsupported(t, h, Versions)
	ctx := ctxFor(t)
	name := newBucket(t, h)
	if err := h.Versioning(ctx, name, true); err != nil {
		t.Fatalf("switching versioning on: %v", err)
	}
	const key = "shoot--a--b--1/etcd-main/v2/Full-00000000-00000010-1700000000"
	for _, data := range []string{"first", "second"} {
		if err := h.Store.PutObject(ctx, name, key, []byte(data)); err != nil {
			t.Fatalf("PutObject: %v", err)
		}
	}
	read := func(version string) string {
		t.Helper()
		rc, err := h.Store.OpenObject(ctx, name, key, version)
		if err != nil {
			t.Fatalf("OpenObject(%q, version %q): %v", key, version, err)
		}
		defer rc.Close()
		data, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("reading %q version %q: %v", key, version, err)
		}
		return string(data)
	}
	var current, old []string
	for _, o := range listAll(t, ctx, h.Store, name, key) {
		switch {
		case o.DeleteMarker || o.BlobSnapshot:
			t.Fatalf("listed %+v: no delete marker or blob snapshot was made", o)
		case o.Noncurrent:
			old = append(old, read(o.Version))
		default:
			current = append(current, read(o.Version))
		}
	}
	if fmt.Sprint(old) != "[first]" || fmt.Sprint(current) != "[second]" {
		t.Fatalf("the listed versions read %v (noncurrent) and %v (current); want [first] and [second]", old, current)
	}
	if got := read(""); got != "second" {
		t.Fatalf("OpenObject with no version read %q; want the current %q", got, "second")
	}
	if _, err := h.Store.OpenObject(ctx, name, "shoot--a--b--1/missing", ""); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("OpenObject of a missing object: %v; want ErrNotFound", err)
	}
}

// testExcludeMark: a mark set with the store's own means is what the store's SnapshotRule reads
// (the listing's ExcludeMark, or MarkOf), on the marked key only. Where the store's rule needs
// versioning for its exclusion (S3), versioning is switched on first.
func testExcludeMark(t *testing.T, h Harness) {
	skipUnsupported(t, h, ExcludeMark)
	ctx := ctxFor(t)
	name := newBucket(t, h)
	if !h.unsupported(Versions) {
		if err := h.Versioning(ctx, name, true); err != nil {
			t.Fatalf("switching versioning on: %v", err)
		}
	}
	const marked, plain = "shoot--a--b--1/etcd-main/v2/Full-00000000-00000010-1700000000", "shoot--a--b--1/etcd-main/v2/Incr-00000011-00000020-1700000100"
	for _, k := range []string{marked, plain} {
		if err := h.Store.PutObject(ctx, name, k, []byte("data of "+k)); err != nil {
			t.Fatalf("PutObject(%q): %v", k, err)
		}
	}
	if err := h.MarkExcluded(ctx, name, marked); err != nil {
		t.Fatalf("MarkExcluded(%q): %v", marked, err)
	}
	rule, err := h.Store.SnapshotRule(ctx, name)
	if err != nil {
		t.Fatalf("SnapshotRule: %v", err)
	}
	got := map[string]bool{}
	for _, o := range listAll(t, ctx, h.Store, name, "shoot--a--b--1/") {
		if o.Noncurrent {
			continue
		}
		switch rule.Exclusion {
		case objectstore.ExcludeMarked:
			got[o.Key] = o.ExcludeMark
		case objectstore.ExcludeMarkedIfDeleted:
			m, err := rule.MarkOf(ctx, o)
			if err != nil {
				t.Fatalf("MarkOf(%+v): %v", o, err)
			}
			got[o.Key] = m
		default:
			t.Fatalf("the harness sets exclude marks, but the store's rule %+v never reads them", rule)
		}
	}
	if want := map[string]bool{marked: true, plain: false}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("exclude marks read %v; want %v", got, want)
	}
}
