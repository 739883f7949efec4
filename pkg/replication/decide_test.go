// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import (
	"slices"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// The stores' rules as their DataPlanes state them (pkg/provider/*/snapshotrule.go).
var (
	gcs         = objectstore.SnapshotRule{Versions: objectstore.CurrentVersions, Exclusion: objectstore.ExcludeMarked}
	s3Versioned = objectstore.SnapshotRule{Versions: objectstore.OldestVersion, Exclusion: objectstore.ExcludeMarkedIfDeleted, ReadsListedVersion: true}
	s3Plain     = objectstore.SnapshotRule{Versions: objectstore.CurrentVersions}
	abs         = objectstore.SnapshotRule{Versions: objectstore.EveryVersion, Exclusion: objectstore.ExcludeMarked}
	swift       = objectstore.SnapshotRule{Versions: objectstore.CurrentVersions}
)

func TestDecide(t *testing.T) {
	const prefix = "shoot--p--s--1/"
	now := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	at := func(minutesAgo int) time.Time { return now.Add(-time.Duration(minutesAgo) * time.Minute) }
	full := prefix + "etcd-main/v2/Full-00000000-00000100-1764392400.gz"
	delta := prefix + "etcd-main/v2/Incr-00000101-00000200-1764392700.gz"
	obj := func(key string, size int64, minutesAgo int) objectstore.ObjectVersion {
		return objectstore.ObjectVersion{Key: key, Size: size, Modified: at(minutesAgo)}
	}
	withMD5 := func(o objectstore.ObjectVersion, sum string) objectstore.ObjectVersion { o.ContentMD5 = sum; return o }
	withETag := func(o objectstore.ObjectVersion, etag string) objectstore.ObjectVersion { o.ETag = etag; return o }
	cases := []struct {
		name        string
		source      []objectstore.ObjectVersion
		destination []objectstore.ObjectVersion
		copy        []string
		inSync      int
		conflicts   []string
		excluded    int
		lag         time.Duration
	}{
		{name: "empty source: caught up"},
		{name: "empty destination: everything, oldest first", source: []objectstore.ObjectVersion{obj(delta, 5, 10), obj(full, 50, 30)},
			copy: []string{full, delta}, lag: 30 * time.Minute},
		{name: "same size: in sync", source: []objectstore.ObjectVersion{obj(full, 50, 30), obj(delta, 5, 10)},
			destination: []objectstore.ObjectVersion{obj(full, 50, 20), obj(delta, 5, 1)}, inSync: 2},
		{name: "only the missing one, lag is its age", source: []objectstore.ObjectVersion{obj(full, 50, 30), obj(delta, 5, 10)},
			destination: []objectstore.ObjectVersion{obj(full, 50, 20)}, copy: []string{delta}, inSync: 1, lag: 10 * time.Minute},
		{name: "same size and MD5 where both state it: in sync", source: []objectstore.ObjectVersion{withMD5(obj(full, 50, 30), "aa")},
			destination: []objectstore.ObjectVersion{withMD5(obj(full, 50, 20), "aa")}, inSync: 1},
		{name: "MD5 stated on one side only: size decides", source: []objectstore.ObjectVersion{withMD5(obj(full, 50, 30), "aa")},
			destination: []objectstore.ObjectVersion{obj(full, 50, 20)}, inSync: 1},
		{name: "other MD5, destination newer: kept, a conflict in the lag", source: []objectstore.ObjectVersion{withMD5(obj(full, 50, 30), "aa")},
			destination: []objectstore.ObjectVersion{withMD5(obj(full, 50, 20), "bb")}, conflicts: []string{full}, lag: 30 * time.Minute},
		{name: "other size, destination newer: never overwritten", source: []objectstore.ObjectVersion{obj(full, 50, 30)},
			destination: []objectstore.ObjectVersion{obj(full, 49, 20)}, conflicts: []string{full}, lag: 30 * time.Minute},
		{name: "other size, destination written at the same time: never overwritten", source: []objectstore.ObjectVersion{obj(full, 50, 30)},
			destination: []objectstore.ObjectVersion{obj(full, 49, 30)}, conflicts: []string{full}, lag: 30 * time.Minute},
		{name: "other size, destination older: overwritten", source: []objectstore.ObjectVersion{obj(full, 50, 30)},
			destination: []objectstore.ObjectVersion{obj(full, 49, 40)}, copy: []string{full}, lag: 30 * time.Minute},
		{name: "destination's current version is a delete marker: copied", source: []objectstore.ObjectVersion{obj(full, 50, 30)},
			destination: []objectstore.ObjectVersion{{Key: full, Modified: at(1), Noncurrent: true, DeleteMarker: true}}, copy: []string{full}, lag: 30 * time.Minute},
		{name: "not snapshots: chunks, other keys, another prefix", source: []objectstore.ObjectVersion{
			obj(full+"/0000000001", 5, 30), obj(prefix+"etcd-main/marker", 1, 30), obj("shoot--p--s--10/etcd-main/v2/Full-00000000-00000100-1764392400.gz", 5, 30)}},
		{name: "noncurrent versions, delete markers and blob snapshots of the source: not copied", source: []objectstore.ObjectVersion{
			{Key: full, Size: 50, Modified: at(30), Noncurrent: true}, {Key: delta, Modified: at(30), Noncurrent: true, DeleteMarker: true},
			{Key: delta, Size: 5, Modified: at(30), Noncurrent: true, BlobSnapshot: true}}},
		{name: "excluded by etcd-backup-restore's mark: not copied, not lagging", source: []objectstore.ObjectVersion{
			{Key: full, Size: 50, Modified: at(30), ExcludeMark: true}}, excluded: 1},
		{name: "source written after now (the clocks differ): no negative lag", source: []objectstore.ObjectVersion{obj(full, 50, -5)},
			copy: []string{full}, lag: 0},
		// Across store types the ETags differ in form and meaning (S3's MD5 or a multipart
		// checksum, Azure's opaque 0x..., Swift's hash): they are never compared, only the size
		// and an MD5 both listings state.
		{name: "across store types: ETags are not compared", source: []objectstore.ObjectVersion{withETag(obj(full, 50, 30), `"9b2cf535f27731c974343645a3985328-3"`)},
			destination: []objectstore.ObjectVersion{withETag(obj(full, 50, 20), `0x8DD0F3A2B4C5D6E`)}, inSync: 1},
		{name: "across store types: another size is copied whatever the ETags", source: []objectstore.ObjectVersion{withETag(obj(full, 50, 30), `"aa"`)},
			destination: []objectstore.ObjectVersion{withETag(obj(full, 49, 40), `"aa"`)}, copy: []string{full}, lag: 30 * time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := map[string]objectstore.ObjectVersion{}
			for _, d := range c.destination {
				dst[d.Key] = d
			}
			p := decide(prefix, gcs, c.source, nil, dst, false, now)
			var copied, conflicts []string
			for _, o := range p.Copy {
				copied = append(copied, o.Key)
			}
			for _, o := range p.Conflicts {
				conflicts = append(conflicts, o.Source.Key)
			}
			if !slices.Equal(copied, c.copy) || !slices.Equal(conflicts, c.conflicts) || p.InSync != c.inSync || p.Excluded != c.excluded || p.Lag != c.lag {
				t.Errorf("copy %v, conflicts %v, in sync %d, excluded %d, lag %s; want %v, %v, %d, %d, %s",
					copied, conflicts, p.InSync, p.Excluded, p.Lag, c.copy, c.conflicts, c.inSync, c.excluded, c.lag)
			}
			if p.Done() != (len(c.copy) == 0 && len(c.conflicts) == 0) {
				t.Errorf("Done() = %t", p.Done())
			}
		})
	}
}

// TestDecideBySnapshotRule: the copy is the version a restore from the source reads, per store.
func TestDecideBySnapshotRule(t *testing.T) {
	const prefix = "shoot--p--s--1/"
	now := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	at := func(minutesAgo int) time.Time { return now.Add(-time.Duration(minutesAgo) * time.Minute) }
	key := prefix + "etcd-main/v2/Full-00000000-00000100-1764392400.gz"
	version := func(id string, size int64, minutesAgo int, noncurrent bool) objectstore.ObjectVersion {
		return objectstore.ObjectVersion{Key: key, Version: id, Size: size, Modified: at(minutesAgo), Noncurrent: noncurrent}
	}
	marked := func(o objectstore.ObjectVersion) objectstore.ObjectVersion { o.ExcludeMark = true; return o }
	deleteMarker := objectstore.ObjectVersion{Key: key, Version: "dm", Modified: at(1), Noncurrent: true, DeleteMarker: true}
	// Listings give the newest version first, as S3's and Azure's do.
	twoVersions := []objectstore.ObjectVersion{version("new", 60, 10, false), version("old", 50, 30, true)}
	deleted := []objectstore.ObjectVersion{deleteMarker, version("new", 60, 10, true), version("old", 50, 30, true)}
	cases := []struct {
		name       string
		rule       objectstore.SnapshotRule
		source     []objectstore.ObjectVersion
		marked     map[versionID]bool
		copy       string // the version ID copied ("": none)
		excluded   int
		unreadable int
	}{
		{name: "S3 versioned: the oldest version, not the current one", rule: s3Versioned, source: twoVersions, copy: "old"},
		{name: "S3 versioned, tie of times: the one listed first", rule: s3Versioned,
			source: []objectstore.ObjectVersion{version("a", 60, 30, false), version("b", 50, 30, true)}, copy: "a"},
		{name: "S3 versioned, newest is a delete marker: the oldest version still", rule: s3Versioned, source: deleted, copy: "old"},
		{name: "S3 versioned, deleted and its oldest version marked: excluded", rule: s3Versioned, source: deleted,
			marked: map[versionID]bool{{key, "old"}: true}, excluded: 1},
		{name: "S3 versioned, deleted and only the newest version marked: copied", rule: s3Versioned, source: deleted,
			marked: map[versionID]bool{{key, "new"}: true}, copy: "old"},
		{name: "S3 versioned, marked but never deleted: the mark is not read, copied", rule: s3Versioned,
			source: []objectstore.ObjectVersion{marked(version("old", 50, 30, false))}, copy: "old"},
		{name: "S3 without versioning: the current object, its tag not read", rule: s3Plain,
			source: []objectstore.ObjectVersion{marked(version("null", 50, 30, false))}, copy: "null"},
		{name: "GCS: the live generation", rule: gcs, source: twoVersions, copy: "new"},
		{name: "GCS: only noncurrent generations: nothing", rule: gcs, source: deleted},
		{name: "GCS: the live object marked: excluded", rule: gcs,
			source: []objectstore.ObjectVersion{marked(version("new", 60, 10, false)), version("old", 50, 30, true)}, excluded: 1},
		{name: "Azure: every version listed, the current one read, copied once", rule: abs, source: twoVersions, copy: "new"},
		{name: "Azure: a deleted blob's versions are listed and cannot be read", rule: abs,
			source: []objectstore.ObjectVersion{version("new", 60, 10, true), version("old", 50, 30, true)}, unreadable: 2},
		{name: "Azure: one version marked, another not: the key is listed, its current version read", rule: abs,
			source: []objectstore.ObjectVersion{marked(version("new", 60, 10, false)), version("old", 50, 30, true)}, copy: "new"},
		{name: "Azure: every version marked: excluded", rule: abs,
			source: []objectstore.ObjectVersion{marked(version("new", 60, 10, false)), marked(version("old", 50, 30, true))}, excluded: 1},
		{name: "Swift: the current object", rule: swift, source: twoVersions, copy: "new"},
		{name: "Swift: newest is a delete marker: not listed, nothing", rule: swift, source: deleted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := decide(prefix, c.rule, c.source, c.marked, map[string]objectstore.ObjectVersion{}, false, now)
			var copied string
			switch len(p.Copy) {
			case 0:
			case 1:
				copied = p.Copy[0].Version
			default:
				t.Fatalf("%d copies of one key: %+v", len(p.Copy), p.Copy)
			}
			if copied != c.copy || p.Excluded != c.excluded || len(p.Unreadable) != c.unreadable {
				t.Errorf("copied %q, excluded %d, unreadable %d; want %q, %d, %d", copied, p.Excluded, len(p.Unreadable), c.copy, c.excluded, c.unreadable)
			}
		})
	}
}

// TestMarkQuestions: the marks S3's rule reads by request are those of the listed (oldest)
// version of a key with a delete marker, and no other rule asks any.
func TestMarkQuestions(t *testing.T) {
	const prefix = "shoot--p--s--1/"
	deletedKey := prefix + "etcd-main/v2/Full-00000000-00000100-1764392400.gz"
	liveKey := prefix + "etcd-main/v2/Incr-00000101-00000200-1764392700.gz"
	t0 := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	source := []objectstore.ObjectVersion{
		{Key: deletedKey, Version: "dm", Modified: t0.Add(2 * time.Minute), Noncurrent: true, DeleteMarker: true},
		{Key: deletedKey, Version: "new", Size: 2, Modified: t0.Add(time.Minute), Noncurrent: true},
		{Key: deletedKey, Version: "old", Size: 1, Modified: t0, Noncurrent: true},
		{Key: liveKey, Version: "v", Size: 1, Modified: t0},
		{Key: prefix + "etcd-main/not-a-snapshot", Version: "dm", Noncurrent: true, DeleteMarker: true},
	}
	got := markQuestions(prefix, s3Versioned, source)
	if len(got) != 1 || got[0].Key != deletedKey || got[0].Version != "old" {
		t.Errorf("S3 versioned asks %+v; want the oldest version of %s", got, deletedKey)
	}
	for _, rule := range []objectstore.SnapshotRule{gcs, s3Plain, abs, swift} {
		if got := markQuestions(prefix, rule, source); len(got) != 0 {
			t.Errorf("rule %+v asks %+v; want none", rule, got)
		}
	}
}
