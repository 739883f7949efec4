// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// version is one listed version of a snapshot key under the table's prefix.
type version struct {
	name        string // under shoot--a--b--x/etcd-main/v2/
	id          string
	at          int // minutes after t0: Modified
	noncurrent  bool
	deleteMark  bool
	excludeMark bool // in the listing (GCS, Azure) or behind MarkOf (S3)
}

func (v version) listed() objectstore.ObjectVersion {
	return objectstore.ObjectVersion{
		Key: "shoot--a--b--x/etcd-main/v2/" + v.name, Version: v.id, Size: 10,
		Modified:   time.Date(2026, 11, 1, 0, v.at, 0, 0, time.UTC),
		Noncurrent: v.noncurrent || v.deleteMark, DeleteMarker: v.deleteMark, ExcludeMark: v.excludeMark,
	}
}

// rules are the stores' rules as their data planes state them; S3's MarkOf reads the table's
// marks and counts the keys it was asked for.
func rules(marks map[string]bool, asked *[]string) map[string]objectstore.SnapshotRule {
	return map[string]objectstore.SnapshotRule{
		"s3": {Versions: objectstore.OldestVersion, Exclusion: objectstore.ExcludeMarkedIfDeleted, ReadsListedVersion: true,
			MarkOf: func(_ context.Context, o objectstore.ObjectVersion) (bool, error) {
				*asked = append(*asked, o.Key[len("shoot--a--b--x/etcd-main/v2/"):]+"@"+o.Version)
				return marks[o.Key+"@"+o.Version], nil
			}},
		"s3-unversioned": {},
		"gcs":            {Versions: objectstore.CurrentVersions, Exclusion: objectstore.ExcludeMarked},
		"azure":          {Versions: objectstore.EveryVersion, Exclusion: objectstore.ExcludeMarked},
		"swift":          {Versions: objectstore.CurrentVersions},
	}
}

const (
	full10   = "Full-00000000-00000010-100"
	delta20  = "Incr-00000011-00000020-110"
	delta30  = "Incr-00000021-00000030-120"
	second25 = "Incr-00000015-00000025-115" // a second writer's, overlapping delta20
	full30   = "Full-00000000-00000030-130"
)

func TestChainsFollowTheStoresRule(t *testing.T) {
	tests := []struct {
		name     string
		rule     string
		versions []version
		// want is the chain: its snapshots in order as name@version-to-read ("" current).
		want       string
		wantReason Reason
		// wantAsked are the versions whose exclude mark was asked by request (S3).
		wantAsked string
	}{
		{
			name: "S3 versioned: a delete marker over a second writer's locked delta leaves it in the chain",
			rule: "s3",
			versions: []version{
				{name: full10, id: "f1", at: 1}, {name: delta20, id: "d1", at: 2},
				{name: second25, id: "x1", at: 3, noncurrent: true}, {name: second25, id: "dm", at: 4, deleteMark: true},
			},
			want: "[" + full10 + "@f1 " + delta20 + "@d1 " + second25 + "@x1]", wantReason: ReasonChainBroken, wantAsked: "[" + second25 + "@x1]",
		},
		{
			name: "S3 versioned: a re-uploaded delta is read in its oldest version",
			rule: "s3",
			versions: []version{
				{name: full10, id: "f1", at: 1}, {name: delta20, id: "d2", at: 5}, {name: delta20, id: "d1", at: 2, noncurrent: true},
			},
			want: "[" + full10 + "@f1 " + delta20 + "@d1]", wantAsked: "[]",
		},
		{
			name: "S3 versioned: a deleted full snapshot tagged to be excluded leaves the older chain",
			rule: "s3",
			versions: []version{
				{name: full10, id: "f1", at: 1}, {name: delta20, id: "d1", at: 2}, {name: delta30, id: "d2", at: 3},
				{name: full30, id: "g1", at: 4, noncurrent: true, excludeMark: true}, {name: full30, id: "dm", at: 5, deleteMark: true},
			},
			want: "[" + full10 + "@f1 " + delta20 + "@d1 " + delta30 + "@d2]", wantAsked: "[" + full30 + "@g1]",
		},
		{
			name: "S3 versioned: the exclude tag without a delete marker is not looked at",
			rule: "s3",
			versions: []version{
				{name: full10, id: "f1", at: 1}, {name: delta20, id: "d1", at: 2}, {name: delta30, id: "d2", at: 3},
				{name: full30, id: "g1", at: 4, excludeMark: true},
			},
			want: "[" + full30 + "@g1]", wantAsked: "[]",
		},
		{
			name: "S3 versioned: a deleted full snapshot without the tag is still restored from",
			rule: "s3",
			versions: []version{
				{name: full10, id: "f1", at: 1}, {name: delta20, id: "d1", at: 2},
				{name: full30, id: "g1", at: 4, noncurrent: true}, {name: full30, id: "dm", at: 5, deleteMark: true},
			},
			want: "[" + full30 + "@g1]", wantAsked: "[" + full30 + "@g1]",
		},
		{
			name: "S3 without versioning: current objects, read by name",
			rule: "s3-unversioned",
			versions: []version{
				{name: full10, id: "null", at: 1}, {name: delta20, id: "null", at: 2}, {name: second25, id: "x1", at: 3, noncurrent: true},
			},
			want: "[" + full10 + "@ " + delta20 + "@]",
		},
		{
			name: "GCS: a full snapshot with the exclude metadata is skipped",
			rule: "gcs",
			versions: []version{
				{name: full10, id: "1", at: 1}, {name: delta20, id: "2", at: 2}, {name: full30, id: "3", at: 4, excludeMark: true},
			},
			want: "[" + full10 + "@ " + delta20 + "@]",
		},
		{
			name: "GCS: a noncurrent generation is not listed, a re-upload is read live",
			rule: "gcs",
			versions: []version{
				{name: full10, id: "1", at: 1}, {name: delta20, id: "2", at: 2, noncurrent: true}, {name: delta20, id: "5", at: 5},
				{name: second25, id: "3", at: 3, noncurrent: true},
			},
			want: "[" + full10 + "@ " + delta20 + "@]",
		},
		{
			name: "Azure: a tagged full snapshot is skipped",
			rule: "azure",
			versions: []version{
				{name: full10, id: "current:1", at: 1}, {name: delta20, id: "current:2", at: 2}, {name: full30, id: "current:3", at: 4, excludeMark: true},
			},
			want: "[" + full10 + "@ " + delta20 + "@]",
		},
		{
			name: "Azure: every version is a snapshot of its own, a re-uploaded delta is applied twice",
			rule: "azure",
			versions: []version{
				{name: full10, id: "current:1", at: 1}, {name: delta20, id: "version:2", at: 2, noncurrent: true}, {name: delta20, id: "current:5", at: 5},
			},
			want: "[" + full10 + "@ " + delta20 + "@ " + delta20 + "@]", wantReason: ReasonChainBroken,
		},
		{
			name: "Azure: a deleted blob's previous version is listed and cannot be read by name",
			rule: "azure",
			versions: []version{
				{name: full10, id: "current:1", at: 1}, {name: delta20, id: "version:2", at: 2, noncurrent: true},
			},
			want: "[" + full10 + "@ " + delta20 + "@]", wantReason: ReasonChainBroken,
		},
		{
			name: "Azure: only the tagged version is left out",
			rule: "azure",
			versions: []version{
				{name: full10, id: "current:1", at: 1}, {name: delta20, id: "version:2", at: 2, noncurrent: true, excludeMark: true}, {name: delta20, id: "current:5", at: 5},
			},
			want: "[" + full10 + "@ " + delta20 + "@]",
		},
		{
			name: "Swift: marks are not looked at",
			rule: "swift",
			versions: []version{
				{name: full10, at: 1}, {name: delta20, at: 2}, {name: full30, at: 4, excludeMark: true},
			},
			want: "[" + full30 + "@]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marks := map[string]bool{}
			var objects []objectstore.ObjectVersion
			for _, v := range tt.versions {
				o := v.listed()
				objects = append(objects, o)
				marks[o.Key+"@"+o.Version] = v.excludeMark
			}
			asked := []string{}
			rule := rules(marks, &asked)[tt.rule]
			if tt.rule == "s3" {
				for i := range objects {
					objects[i].ExcludeMark = false // S3's listing does not carry tags
				}
			}
			chains, err := CheckChains(context.Background(), "shoot--a--b--x/", rule, objects)
			if err != nil {
				t.Fatal(err)
			}
			if len(chains) != 1 {
				t.Fatalf("%d chains, want 1", len(chains))
			}
			ch := chains[0]
			var got []string
			if ch.Full != nil {
				got = append(got, ch.Full.Key[len(dirOf):]+"@"+ch.Full.Version)
			}
			for _, d := range ch.Deltas {
				got = append(got, d.Key[len(dirOf):]+"@"+d.Version)
			}
			if fmt.Sprint(got) != tt.want {
				t.Errorf("chain %v, want %s", got, tt.want)
			}
			if r := ReasonOf(ch.Err); r != tt.wantReason {
				t.Errorf("reason %q, want %q (%v)", r, tt.wantReason, ch.Err)
			}
			if tt.wantAsked != "" && fmt.Sprint(asked) != tt.wantAsked {
				t.Errorf("exclude marks asked of %v, want %s", asked, tt.wantAsked)
			}
		})
	}
}

const dirOf = "shoot--a--b--x/etcd-main/v2/"

// A store that fails to tell an exclude mark proves nothing: the chains are an error, the
// store's, not a finding.
func TestChainsMarkErrorIsTheStores(t *testing.T) {
	rule := objectstore.SnapshotRule{Versions: objectstore.OldestVersion, Exclusion: objectstore.ExcludeMarkedIfDeleted, ReadsListedVersion: true,
		MarkOf: func(context.Context, objectstore.ObjectVersion) (bool, error) { return false, objectstore.ErrThrottled }}
	_, err := CheckChains(context.Background(), "shoot--a--b--x/", rule, []objectstore.ObjectVersion{
		version{name: full10, id: "f1", at: 1}.listed(), version{name: full10, id: "dm", at: 2, deleteMark: true}.listed(),
	})
	if !errors.Is(err, objectstore.ErrThrottled) || ReasonOf(err) != "" {
		t.Fatalf("err %v, want the store's ErrThrottled and no finding", err)
	}
}

// The drill reads what etcd-backup-restore would read on a versioned S3 bucket (the memstore
// plays S3): a delta uploaded damaged and then re-uploaded intact is restored from its first,
// damaged version; a second writer's delta "removed" by a delete marker is still applied.
func TestDrillVersionedStore(t *testing.T) {
	plain := newChain(t, "")
	tests := []struct {
		name   string
		change func(t *testing.T, s versioned, names []string)
		want   Reason
	}{
		{"a re-uploaded delta is drilled in its oldest version", func(t *testing.T, s versioned, n []string) {
			good := s.get(t, n[2])
			s.purge(t, n[2]) // its first upload was damaged, the second one intact
			s.put(t, n[2], flip(good, 40))
			s.put(t, n[2], good)
		}, ReasonHashMismatch},
		{"a second writer's delta under a delete marker stays a finding", func(t *testing.T, s versioned, n []string) {
			d, _ := ParseKey("", "e/v2/"+n[2])
			bad := fmt.Sprintf("Incr-%08d-%08d-1800000000", d.StartRevision-1, d.LastRevision+1)
			s.put(t, bad, s.get(t, n[2]))
			s.remove(t, bad)
		}, ReasonChainBroken},
		{"a full snapshot tagged to be excluded and deleted: the chain before it is drilled", func(t *testing.T, s versioned, n []string) {
			// A newer full snapshot that is damaged would fail the drill if it were chosen.
			last, _ := ParseKey("", "e/v2/"+n[3])
			newer := fmt.Sprintf("Full-00000000-%08d-1900000000", last.LastRevision)
			s.put(t, newer, flip(s.get(t, n[0]), 4096+100))
			if err := s.MarkExcluded(context.Background(), bucket, dir+newer); err != nil {
				t.Fatal(err)
			}
			s.remove(t, newer)
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := versioned{versionedStore(t, plain.objects)}
			tt.change(t, s, plain.names)
			r, restored := drill(t, s.Store, Options{})
			if got := ReasonOf(r.Err); got != tt.want {
				t.Fatalf("reason %q, want %q: %v", got, tt.want, r.Err)
			}
			if tt.want == "" && (r.Revision != plain.lastRev || !maps.Equal(restored, plain.want)) {
				t.Errorf("restored revision %d, want %d; keys equal: %v", r.Revision, plain.lastRev, maps.Equal(restored, plain.want))
			}
			t.Logf("%v", r.Err)
		})
	}
}

// versioned is a memstore bucket with versioning on, holding a chain under dir.
type versioned struct{ *memstore.Store }

func versionedStore(t *testing.T, objects map[string][]byte) *memstore.Store {
	t.Helper()
	s := memstore.New(1000)
	ctx := context.Background()
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: bucket}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetVersioning(ctx, bucket, true); err != nil {
		t.Fatal(err)
	}
	for name, data := range objects {
		if err := s.PutObject(ctx, bucket, dir+name, data); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s versioned) get(t *testing.T, name string) []byte {
	t.Helper()
	data, err := objectstore.ReadObject(context.Background(), s.Store, bucket, dir+name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func (s versioned) put(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := s.PutObject(context.Background(), bucket, dir+name, data); err != nil {
		t.Fatal(err)
	}
}

// remove is a plain delete: a delete marker over the key's versions.
func (s versioned) remove(t *testing.T, name string) {
	t.Helper()
	if errs, err := s.DeleteObjects(context.Background(), bucket, []objectstore.ObjectVersion{{Key: dir + name}}); err != nil || len(errs) > 0 {
		t.Fatalf("deleting %s: %v %v", name, errs, err)
	}
}

// purge deletes every version of a key, by version ID.
func (s versioned) purge(t *testing.T, name string) {
	t.Helper()
	var all []objectstore.ObjectVersion
	if err := s.ListObjects(context.Background(), bucket, dir+name, func(p []objectstore.ObjectVersion) error {
		all = append(all, p...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if errs, err := s.DeleteObjects(context.Background(), bucket, all); err != nil || len(errs) > 0 {
		t.Fatalf("deleting %s: %v %v", name, errs, err)
	}
}
