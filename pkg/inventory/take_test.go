// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// fmtSnapshot names a snapshot as etcd-backup-restore's GenerateSnapshotName does.
func fmtSnapshot(kind string, startRev, lastRev int64, created time.Time, suffix string) string {
	return fmt.Sprintf("%s-%08d-%08d-%d%s", kind, startRev, lastRev, created.Unix(), suffix)
}

const bucket = "b"

func newStore(t *testing.T) *memstore.Store {
	t.Helper()
	s := memstore.New(1000)
	if err := s.EnsureBucket(context.Background(), objectstore.Bucket{Name: bucket}); err != nil {
		t.Fatal(err)
	}
	return s
}

func put(t *testing.T, s objectstore.Writer, key string, size int) {
	t.Helper()
	if err := s.PutObject(context.Background(), bucket, key, make([]byte, size)); err != nil {
		t.Fatal(err)
	}
}

func snap(key string, at time.Time) *Snapshot { return &Snapshot{Key: key, Time: metaTime(at)} }

func TestTake(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	t0 := now.Add(-3 * time.Hour)
	e := "shoot--p--s--uid/"
	s := newStore(t)
	if err := s.SetVersioning(ctx, bucket, true); err != nil {
		t.Fatal(err)
	}

	full1 := e + "etcd-main/v2/" + fmtSnapshot(kindFull, 0, 10, t0, ".gz")
	full2 := e + "etcd-main/v2/" + fmtSnapshot(kindFull, 0, 20, t0.Add(time.Hour), ".gz")
	incr1 := e + "etcd-main/v2/" + fmtSnapshot(kindDelta, 21, 25, t0.Add(90*time.Minute), ".gz")
	// Same second as incr2low: the higher last revision is newer.
	incr2low := e + "etcd-main/v2/" + fmtSnapshot(kindDelta, 26, 27, t0.Add(2*time.Hour), ".gz")
	incr2 := e + "etcd-main/v2/" + fmtSnapshot(kindDelta, 26, 28, t0.Add(2*time.Hour), ".gz")
	// Newest of all, but deleted: a delete marker makes its versions noncurrent.
	gone := e + "etcd-main/v2/" + fmtSnapshot(kindDelta, 29, 30, t0.Add(150*time.Minute), ".gz")
	// A chunk newer than everything: not a snapshot.
	chunk := e + "etcd-main/v2/" + fmtSnapshot(kindFull, 0, 40, t0.Add(170*time.Minute), ".gz") + "/0000000001"
	// Only a v1 full snapshot for etcd-events.
	v1 := e + "etcd-events/v1/Backup-1600000000/" + fmtSnapshot(kindFull, 0, 5, time.Unix(1600000000, 0), "")
	other := e + "etcd-main/readme"

	for i, k := range []string{full1, full2, incr1, incr2, incr2low, gone, chunk, v1, other} {
		put(t, s, k, 100+i)
	}
	put(t, s, full1, 1000) // a second version: the first becomes noncurrent
	if _, err := s.DeleteObjects(ctx, bucket, []objectstore.ObjectVersion{{Key: gone}}); err != nil {
		t.Fatal(err)
	}
	put(t, s, "shoot--p--s--uid2/etcd-main/v2/"+fmtSnapshot(kindFull, 0, 99, now, ""), 7) // another entry
	s.Lock(bucket, full2, now.Add(time.Hour))
	s.Lock(bucket, incr1, now) // expires at now: not under retention any more

	got, err := Take(ctx, s.WithPageSize(3), bucket, e, now)
	if err != nil {
		t.Fatal(err)
	}
	want := Inventory{
		CountedAt: metaTime(now),
		// 9 keys, one of them deleted.
		Objects: 8,
		// 9 first versions, full1's second, gone's delete marker.
		Versions:       11,
		Bytes:          100 + 101 + 102 + 103 + 104 + 105 + 106 + 107 + 108 + 1000,
		UnderRetention: 1,
		Pages:          4,
		Etcds: []Etcd{
			{Name: "etcd-events", LatestFull: snap(v1, time.Unix(1600000000, 0))},
			{Name: "etcd-main", LatestFull: snap(full2, t0.Add(time.Hour)), LatestDelta: snap(incr2, t0.Add(2*time.Hour))},
		},
	}
	if d := diff(got, want); d != "" {
		t.Errorf("Take:\n%s", d)
	}
}

func TestTakeEmpty(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	got, err := Take(context.Background(), newStore(t), bucket, "e/", now)
	if err != nil {
		t.Fatal(err)
	}
	// memstore does not call fn for an empty listing; a store that returns one empty page
	// would count it.
	want := Inventory{CountedAt: metaTime(now)}
	if d := diff(got, want); d != "" {
		t.Errorf("Take of an empty prefix:\n%s", d)
	}
}

// TestTakePages is the cost of one inventory: an entry of 10,000 objects at 1,000 per page is
// read in exactly 10 pages.
func TestTakePages(t *testing.T) {
	s := newStore(t)
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var newestKey string
	for i := range 10_000 {
		kind := kindDelta
		if i%100 == 0 {
			kind = kindFull
		}
		newestKey = "e/etcd-main/v2/" + fmtSnapshot(kind, int64(i), int64(i), start.Add(time.Duration(i)*time.Minute), ".gz")
		put(t, s, newestKey, 1)
	}
	got, err := Take(context.Background(), s.WithPageSize(1000), bucket, "e/", start)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pages != 10 || got.Objects != 10_000 || got.Bytes != 10_000 {
		t.Errorf("Take read %d pages, %d objects, %d bytes; want 10 pages, 10000 objects and bytes", got.Pages, got.Objects, got.Bytes)
	}
	if len(got.Etcds) != 1 || got.Etcds[0].LatestDelta == nil || got.Etcds[0].LatestDelta.Key != newestKey {
		t.Errorf("Take found %+v; want etcd-main with newest delta %s", got.Etcds, newestKey)
	}
}

// failingStore fails its listing after some pages.
type failingStore struct {
	objectstore.DataPlane

	after int
}

func (f failingStore) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	pages := 0
	return f.DataPlane.ListObjects(ctx, bucket, prefix, func(page []objectstore.ObjectVersion) error {
		if pages == f.after {
			return fmt.Errorf("listing page %d: %w", pages+1, objectstore.ErrThrottled)
		}
		pages++
		return fn(page)
	})
}

func TestTakeListingError(t *testing.T) {
	s := newStore(t)
	for i := range 10 {
		put(t, s, fmt.Sprintf("e/etcd-main/v2/Full-00000000-%08d-%d", i, 1700000000+i), 1)
	}
	for _, tt := range []struct {
		store objectstore.DataPlane
		want  error
	}{
		{failingStore{s.WithPageSize(3), 2}, objectstore.ErrThrottled},
		{s, objectstore.ErrBucketNotFound},
	} {
		b := bucket
		if tt.want == objectstore.ErrBucketNotFound {
			b = "missing"
		}
		got, err := Take(context.Background(), tt.store, b, "e/", time.Now())
		if !errors.Is(err, tt.want) {
			t.Errorf("Take = %v; want an error that is %v", err, tt.want)
		}
		if d := diff(got, Inventory{}); d != "" {
			t.Errorf("Take returned a partial inventory with its error:\n%s", d)
		}
	}
}

// TestTakeLayouts: the v1 and v2 snapshots of one etcd compete by time, whatever the layout; a
// key without an etcd name, or outside a layout, is counted but names no etcd.
func TestTakeLayouts(t *testing.T) {
	s := newStore(t)
	old, recent := time.Unix(1600000000, 0).UTC(), time.Unix(1700000000, 0).UTC()
	v1Full := "e/etcd-main/v1/Backup-1600000000/" + fmtSnapshot(kindFull, 0, 5, old, "")
	v1Delta := "e/etcd-main/v1/Backup-1600000000/" + fmtSnapshot(kindDelta, 6, 7, recent.Add(time.Minute), "")
	v2Full := "e/etcd-main/v2/" + fmtSnapshot(kindFull, 0, 9, recent, ".gz")
	for _, k := range []string{v1Full, v1Delta, v2Full, "e/v2/" + fmtSnapshot(kindFull, 0, 1, recent, ""), "e/etcd-x/" + fmtSnapshot(kindFull, 0, 1, recent, "")} {
		put(t, s, k, 1)
	}
	got, err := Take(context.Background(), s, bucket, "e/", recent)
	if err != nil {
		t.Fatal(err)
	}
	want := []Etcd{{Name: "etcd-main", LatestFull: snap(v2Full, recent), LatestDelta: snap(v1Delta, recent.Add(time.Minute))}}
	if d := diff(Inventory{Etcds: got.Etcds}, Inventory{Etcds: want}); d != "" || got.Objects != 5 {
		t.Errorf("Take found %d objects and:\n%s", got.Objects, d)
	}
}
