// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

func TestEntryPrefix(t *testing.T) {
	cases := []struct {
		entry   string
		want    string
		wantErr bool
	}{
		{entry: "shoot--a--b--1", want: "shoot--a--b--1/"},
		{entry: "source-shoot--a--b--1", want: "shoot--a--b--1/"},
		{entry: "", wantErr: true},
		{entry: "source-", wantErr: true},
		{entry: "a/b", wantErr: true},
		{entry: "../x", wantErr: true},
		{entry: "UPPER", wantErr: true},
		{entry: "-leading", wantErr: true},
		{entry: "has.dot", wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.entry, func(t *testing.T) {
			p, err := objectstore.EntryPrefix(c.entry)
			if c.wantErr {
				if !errors.Is(err, objectstore.ErrInvalidConfig) {
					t.Fatalf("EntryPrefix(%q) = %q, %v; want ErrInvalidConfig", c.entry, p.String(), err)
				}
				return
			}
			if err != nil || p.String() != c.want || p.Validate() != nil {
				t.Fatalf("EntryPrefix(%q) = %q, %v; want %q", c.entry, p.String(), err, c.want)
			}
		})
	}
}

func TestNestedPrefix(t *testing.T) {
	cases := []struct {
		in, want string
		wantErr  bool
	}{
		{in: "virtual-garden-etcd-main", want: "virtual-garden-etcd-main/"},
		{in: "landscape/virtual-garden-etcd-main", want: "landscape/virtual-garden-etcd-main/"},
		{in: "a/b_c/D.e/virtual-garden-etcd-main", want: "a/b_c/D.e/virtual-garden-etcd-main/"},
		{in: "", wantErr: true},
		{in: "/virtual-garden-etcd-main", wantErr: true}, // gardener-operator's prefix for a bucketName "b/"
		{in: "a/", wantErr: true},
		{in: "a//b", wantErr: true},
		{in: "../x", wantErr: true},
		{in: "a/./b", wantErr: true},
		{in: "a b/x", wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			p, err := objectstore.NestedPrefix(c.in)
			if c.wantErr {
				if !errors.Is(err, objectstore.ErrInvalidConfig) {
					t.Fatalf("NestedPrefix(%q) = %q, %v; want ErrInvalidConfig", c.in, p.String(), err)
				}
				return
			}
			if err != nil || p.String() != c.want || p.Validate() != nil {
				t.Fatalf("NestedPrefix(%q) = %q, %v; want %q", c.in, p.String(), err, c.want)
			}
			// The trailing slash: a neighbour whose name extends the last segment is outside.
			if p.Contains(c.in+"-2/etcd-main/v2/Full-x") || !p.Contains(c.want+"etcd-main/v2/Full-x") {
				t.Fatalf("%q contains the wrong keys", p.String())
			}
		})
	}
}

func TestDeletePrefixRefusesInvalidScope(t *testing.T) {
	store := memstore.New(10)
	ctx := context.Background()
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := store.PutObject(ctx, "b", "x/y", nil); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]objectstore.Prefix{"zero value": {}} {
		if _, err := objectstore.DeletePrefix(ctx, store, "b", p, objectstore.DeleteOptions{}); !errors.Is(err, objectstore.ErrInvalidConfig) {
			t.Errorf("%s: %v; want ErrInvalidConfig", name, err)
		}
	}
	prefix, _ := objectstore.EntryPrefix("x")
	if _, err := objectstore.DeletePrefix(ctx, store, "", prefix, objectstore.DeleteOptions{}); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Errorf("empty bucket name: %v; want ErrInvalidConfig", err)
	}
	if keys, _ := conformance.ListKeys(ctx, store, "b", ""); len(keys) != 1 {
		t.Fatalf("an invalid scope deleted something: %v", keys)
	}
}

// fill creates bucket b holding n objects under prefix plus one neighbour object.
func fill(t *testing.T, store *memstore.Store, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	keys := []string{"neighbour--10/keep"}
	for i := range n {
		keys = append(keys, fmt.Sprintf("%sobj-%05d", prefix, i))
	}
	if err := conformance.PutMany(ctx, store, "b", keys); err != nil {
		t.Fatal(err)
	}
}

func TestDeletePrefix(t *testing.T) {
	soon := time.Now().Add(48 * time.Hour).Truncate(time.Second)
	later := soon.Add(24 * time.Hour)
	cases := []struct {
		name          string
		objects       int
		throttleEvery int
		locks         map[string]time.Time
		wantDeleted   int
		wantLocked    int
		wantEarliest  time.Time
		wantThrottled bool
	}{
		{name: "many pages", objects: 1234, wantDeleted: 1234},
		{name: "empty prefix", objects: 0, wantDeleted: 0},
		{name: "locked objects are counted and left", objects: 300, wantDeleted: 297, wantLocked: 3, wantEarliest: soon,
			locks: map[string]time.Time{"n--1/obj-00007": later, "n--1/obj-00100": soon, "n--1/obj-00200": {}}},
		{name: "throttling slows down but completes", objects: 500, throttleEvery: 3, wantDeleted: 500, wantThrottled: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := memstore.New(25)
			fill(t, store, "n--1/", c.objects)
			for k, until := range c.locks {
				store.Lock("b", k, until)
			}
			store.ThrottleEvery(c.throttleEvery)
			prefix, _ := objectstore.EntryPrefix("n--1")
			res, err := objectstore.DeletePrefix(context.Background(), store, "b", prefix, objectstore.DeleteOptions{Parallelism: 4})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Done || res.Deleted != c.wantDeleted || res.Locked != c.wantLocked || !res.EarliestRetainUntil.Equal(c.wantEarliest) {
				t.Fatalf("result %+v; want done, %d deleted, %d locked, earliest %v", res, c.wantDeleted, c.wantLocked, c.wantEarliest)
			}
			if (res.Throttled > 0) != c.wantThrottled {
				t.Fatalf("throttled %d times; want throttling=%v", res.Throttled, c.wantThrottled)
			}
			left, _ := conformance.ListKeys(context.Background(), store, "b", "")
			if len(left) != 1+c.wantLocked || left[len(left)-1] != "neighbour--10/keep" {
				t.Fatalf("left behind %v; want the neighbour and the %d locked objects", left, c.wantLocked)
			}
		})
	}
}

func TestDeletePrefixStopsAtDeadlineAndResumes(t *testing.T) {
	store := memstore.New(10)
	fill(t, store, "n--1/", 200)
	prefix, _ := objectstore.EntryPrefix("n--1")
	res, err := objectstore.DeletePrefix(context.Background(), store, "b", prefix, objectstore.DeleteOptions{Deadline: time.Now().Add(-time.Second)})
	if err != nil || res.Done || res.Deleted != 0 {
		t.Fatalf("past deadline: %+v, %v; want not done, nothing deleted, no error", res, err)
	}
	res, err = objectstore.DeletePrefix(context.Background(), store, "b", prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Deleted != 200 {
		t.Fatalf("resumed pass: %+v, %v; want all 200 deleted", res, err)
	}
}

// misListingStore lists a key outside the requested prefix, as a broken store might.
type misListingStore struct{ *memstore.Store }

func (s misListingStore) ListObjects(_ context.Context, _, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	return fn([]objectstore.ObjectVersion{{Key: prefix + "ok"}, {Key: "neighbour--10/keep"}})
}

func TestDeletePrefixRefusesKeysOutsidePrefix(t *testing.T) {
	store := memstore.New(10)
	fill(t, store, "n--1/", 1)
	prefix, _ := objectstore.EntryPrefix("n--1")
	_, err := objectstore.DeletePrefix(context.Background(), misListingStore{store}, "b", prefix, objectstore.DeleteOptions{})
	if !errors.Is(err, objectstore.ErrOutsidePrefix) {
		t.Fatalf("got %v; want ErrOutsidePrefix", err)
	}
	if left, _ := conformance.ListKeys(context.Background(), store, "b", ""); len(left) != 2 {
		t.Fatalf("a mis-listing store made the engine delete: %v left", left)
	}
}

// failingStore fails every object with a permission error.
type failingStore struct{ *memstore.Store }

func (s failingStore) DeleteObjects(_ context.Context, _ string, objs []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	errs := make([]objectstore.ObjectError, len(objs))
	for i, o := range objs {
		errs[i] = objectstore.ObjectError{Object: o, Err: fmt.Errorf("denied: %w", objectstore.ErrForbidden)}
	}
	return errs, nil
}

func TestDeletePrefixReportsPerObjectErrors(t *testing.T) {
	store := memstore.New(10)
	fill(t, store, "n--1/", 30)
	prefix, _ := objectstore.EntryPrefix("n--1")
	res, err := objectstore.DeletePrefix(context.Background(), failingStore{store}, "b", prefix, objectstore.DeleteOptions{Parallelism: 1})
	if !errors.Is(err, objectstore.ErrForbidden) || res.Done {
		t.Fatalf("got %+v, %v; want a not-done pass failing with ErrForbidden", res, err)
	}
}

// throttlingStore throttles every object of every request, as a store under heavy load may.
type throttlingStore struct{ *memstore.Store }

func (s throttlingStore) DeleteObjects(_ context.Context, _ string, objs []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	errs := make([]objectstore.ObjectError, len(objs))
	for i, o := range objs {
		errs[i] = objectstore.ObjectError{Object: o, Err: fmt.Errorf("slow down: %w", objectstore.ErrThrottled)}
	}
	return errs, nil
}

func TestThrottledObjectsLeftAtTheDeadlineKeepThePassOpen(t *testing.T) {
	store := memstore.New(10)
	fill(t, store, "n--1/", 5)
	prefix, _ := objectstore.EntryPrefix("n--1")
	opts := objectstore.DeleteOptions{Deadline: time.Now().Add(300 * time.Millisecond)}
	res, err := objectstore.DeletePrefix(context.Background(), throttlingStore{store}, "b", prefix, opts)
	if err != nil || res.Done || res.Deleted != 0 || res.Throttled == 0 {
		t.Fatalf("got %+v, %v; want a throttled pass that is not done (its objects are left to retry), no error", res, err)
	}
}

// slowStore's requests outlive the caller's context: each object fails with the context's error,
// as an SDK reports requests cut off by a deadline.
type slowStore struct{ *memstore.Store }

func (s slowStore) DeleteObjects(ctx context.Context, _ string, objs []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	<-ctx.Done()
	errs := make([]objectstore.ObjectError, len(objs))
	for i, o := range objs {
		errs[i] = objectstore.ObjectError{Object: o, Err: fmt.Errorf("delete %q: %w", o.Key, ctx.Err())}
	}
	return errs, nil
}

func TestObjectsCutOffByTheCallersDeadlineKeepThePassOpen(t *testing.T) {
	store := memstore.New(10)
	fill(t, store, "n--1/", 100) // more batches than workers and queue: the listing waits too
	prefix, _ := objectstore.EntryPrefix("n--1")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := objectstore.DeletePrefix(ctx, slowStore{store}, "b", prefix, objectstore.DeleteOptions{Parallelism: 2})
	if err != nil || res.Done || res.Deleted != 0 {
		t.Fatalf("got %+v, %v; want a pass that is not done and no failure: cut-off objects are left for the next pass", res, err)
	}
}

// hangingStore's delete requests hang until their context ends and then fail as a whole, as an
// SDK reports a batch request cut off by a deadline.
type hangingStore struct{ *memstore.Store }

func (s hangingStore) DeleteObjects(ctx context.Context, _ string, _ []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("submitting batch: %w", ctx.Err())
}

func TestCutoffAbandonsRequestsInFlightAndLeavesTimeToReport(t *testing.T) {
	cases := []struct {
		name    string
		store   func(*memstore.Store) objectstore.DataPlane
		objects int
	}{
		{"per-object errors, listing waiting", func(s *memstore.Store) objectstore.DataPlane { return slowStore{s} }, 100},
		{"per-object errors, listing exhausted", func(s *memstore.Store) objectstore.DataPlane { return slowStore{s} }, 5},
		{"whole-request error, listing waiting", func(s *memstore.Store) objectstore.DataPlane { return hangingStore{s} }, 100},
		{"whole-request error, listing exhausted", func(s *memstore.Store) objectstore.DataPlane { return hangingStore{s} }, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memstore.New(10)
			fill(t, mem, "n--1/", c.objects)
			prefix, _ := objectstore.EntryPrefix("n--1")
			// The caller's context outlives the test; only the cutoff can end the pass.
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			opts := objectstore.DeleteOptions{Parallelism: 2, Deadline: time.Now().Add(50 * time.Millisecond), Cutoff: time.Now().Add(100 * time.Millisecond)}
			res, err := objectstore.DeletePrefix(ctx, c.store(mem), "b", prefix, opts)
			if err != nil || res.Done || res.Deleted != 0 {
				t.Fatalf("got %+v, %v; want a pass that is not done and no failure: abandoned objects are the next pass's", res, err)
			}
			if ctx.Err() != nil {
				t.Fatal("the caller's context ended: the pass did not return at its cutoff")
			}
			if left, _ := conformance.ListKeys(context.Background(), mem, "b", "n--1/"); len(left) != c.objects {
				t.Fatalf("%d objects left; want all %d", len(left), c.objects)
			}
		})
	}
}
