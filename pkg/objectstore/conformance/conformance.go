// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package conformance is the one test suite every store (objectstore.DataPlane and Management,
// with a Writer for its fixtures) must pass: the in-memory store
// in unit tests and every provider against its real stand-in (MinIO, Azurite, fake-gcs-server,
// Swift). It checks the contract written on the interface, the error classification the
// controllers rely on, and, above all, that a prefix deletion never touches a neighbour.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Harness describes the store under test.
type Harness struct {
	// Store uses valid credentials, and the providerConfig its buckets are made with. All three
	// of its planes are required.
	Store Stores
	// NewBucketName returns a fresh bucket name that does not exist yet.
	NewBucketName func() string
	// Region is the region buckets are created in.
	Region string
	// OtherRegion, if set, is a region the store refuses for a bucket that exists in Region.
	OtherRegion string
	// BadCredentials, if set, is the same store reached with wrong credentials (its data plane
	// and its management plane; its Writer may be nil).
	BadCredentials Stores
	// ForeignBucket, if set, returns the name of an existing bucket owned by someone else.
	ForeignBucket func(t *testing.T) string
	// ManyObjects is how many objects the paging cases write (default 1200: more than one page
	// on every store; raise it for stores with bigger pages).
	ManyObjects int
	// Versioning, if set, switches object versioning of a bucket the suite made on or off. Every
	// store that can keep versions sets it: the deletion property (see testDeletionLeavesNothing)
	// then also runs with versioning on, and switched off after it was on.
	Versioning func(ctx context.Context, bucket string, on bool) error
	// SmallPages, if set, is Store reached with a listing page size of at most 3 entries (the
	// provider's ListPageSize), so that listings cross page boundaries in the middle of one key's
	// versions. Without it the deletion property uses Store.
	SmallPages objectstore.DataPlane
	// SimulatedClock says that the store writes times of a simulated clock (a stand-in's), not
	// of the wall clock: listed write times are then checked to be set and in write order, not
	// to lie around the test's clock.
	SimulatedClock bool
	// Lock, if set, holds one object (every version of its key) under a retention lock until the
	// given time, as the store's object lock does, in a bucket the suite made; the locked-objects
	// case (see testLockedObjects) runs only with it. Without Unlock the locks it sets last a few
	// seconds, and the case waits for them to end before its bucket is deleted.
	Lock func(ctx context.Context, bucket, key string, until time.Time) error
	// Unlock, if set, lifts a lock Lock set (a governance-mode retention lifted with its bypass
	// permission); the locked-objects case then locks for hours and lifts the locks at its end.
	Unlock func(ctx context.Context, bucket, key string) error
	// LockableBucket, if set, creates a fresh bucket in which Lock works (S3: Object Lock can
	// only be enabled when a bucket is created) and returns its name; the locked-objects case
	// then uses it instead of a bucket of its own, and empties and deletes it at its end.
	LockableBucket func(t *testing.T) string
	// DeferralCovers, if set, checks with the store's own means (the rules read back, the marks
	// on each version) that the store's deferral mechanism takes in every object version now under
	// prefix, and returns an error saying what is not. The concurrent-deferrals case (see
	// testConcurrentDeferrals) runs only with it.
	DeferralCovers func(ctx context.Context, bucket, prefix string) error
	// MarkExcluded, if set, puts etcd-backup-restore's exclude mark (objectstore.ExcludeMarkKey
	// "true") on the current version of key, as an operator excludes a snapshot with the store's
	// own means (S3 object tag, GCS metadata, Azure blob index tag); the exclude-mark case (see
	// testExcludeMark) runs only with it.
	MarkExcluded func(ctx context.Context, bucket, key string) error
	// LargeStreamBytes, if set, is an object size the store's Writer writes in more than one
	// request (parts, blocks, segments, chunks); the conditional-write case (see
	// testConditionalWrite) then writes that size too.
	LargeStreamBytes int64
	// Unsupported lists the features (see Feature) whose hooks this harness leaves unset
	// because the store lacks them; Run fails on an unset hook that is not listed.
	Unsupported []Feature
}

// Run runs the suite. Every case creates its own bucket and deletes it at the end.
func Run(t *testing.T, h Harness) {
	if missing := h.Store.missing(true); len(missing) > 0 {
		t.Fatalf("Harness.Store lacks %v", missing)
	}
	if h.BadCredentials.DataPlane != nil && h.BadCredentials.Management == nil {
		t.Fatal("Harness.BadCredentials has a data plane but no management plane")
	}
	checkFeatures(t, h)
	if h.ManyObjects == 0 {
		h.ManyObjects = 1200
	}
	cases := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"EnsureBucketIsIdempotent", testEnsureBucketIdempotent},
		{"ObjectsRoundTrip", testObjectsRoundTrip},
		{"StreamWrite", testStreamWrite},
		{"ServerSideCopy", testServerSideCopy},
		{"ConditionalWrite", testConditionalWrite},
		{"ListObjectsHonoursPrefixExactly", testListPrefix},
		{"DeleteObjectsChecksAndToleratesMissing", testDeleteObjects},
		{"DeletePrefixRemovesExactlyItsPrefix", testDeletePrefix},
		{"MissingBucket", testMissingBucket},
		{"DeleteBucketRefusesNonEmpty", testDeleteBucketNonEmpty},
		{"BadCredentials", testBadCredentials},
		{"ForeignBucket", testForeignBucket},
		{"OtherRegion", testOtherRegion},
		{"Probe", testProbe},
		{"ListingMetadata", testListingMetadata},
		{"ListingMetadata/Versioned", testListingMetadataVersioned},
		{"DeletionLeavesNothing/VersioningOff", testDeletionLeavesNothing(versioningOff)},
		{"DeletionLeavesNothing/VersioningOn", testDeletionLeavesNothing(versioningOn)},
		{"DeletionLeavesNothing/VersioningSwitchedOff", testDeletionLeavesNothing(versioningSwitchedOff)},
		{"DeferDeletion", testDeferDeletion},
		{"LockedObjects", testLockedObjects},
		{"DeleteMarkers", testDeleteMarkers},
		{"ConcurrentDeferrals", testConcurrentDeferrals},
		{"SnapshotRule", testSnapshotRule},
		{"OpenObjectReadsListedVersions", testOpenListedVersions},
		{"ExcludeMark", testExcludeMark},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, h) })
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newBucket creates a bucket and registers its emptying and deletion at cleanup.
func newBucket(t *testing.T, h Harness) string {
	t.Helper()
	ctx := ctxFor(t)
	name := h.NewBucketName()
	if err := h.Store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: h.Region}); err != nil {
		t.Fatalf("EnsureBucket(%q): %v", name, err)
	}
	t.Cleanup(func() { deleteBucket(t, h, name) })
	return name
}

// deleteBucket empties and deletes a bucket the harness made.
func deleteBucket(t *testing.T, h Harness, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := objectstore.DeletePrefix(ctx, h.Store, name, objectstore.WholeBucket(), objectstore.DeleteOptions{}); err != nil {
		t.Errorf("cleanup: emptying %q: %v", name, err)
		return
	}
	if err := h.Store.DeleteBucket(ctx, name); err != nil {
		t.Errorf("cleanup: deleting %q: %v", name, err)
	}
}

// deleteUntilDone runs DeletePrefix passes until one reports done (at most 10).
func deleteUntilDone(t *testing.T, ctx context.Context, store objectstore.DataPlane, bucket string, prefix objectstore.Prefix, opts objectstore.DeleteOptions) {
	t.Helper()
	for pass := 1; ; pass++ {
		res, err := objectstore.DeletePrefix(ctx, store, bucket, prefix, opts)
		if err != nil {
			t.Fatalf("DeletePrefix pass %d: %v", pass, err)
		}
		if res.Done {
			return
		}
		if pass == 10 {
			t.Fatalf("DeletePrefix not done after %d passes: %+v", pass, res)
		}
	}
}

// newVersionedBucket is newBucket with versioning switched on.
func newVersionedBucket(t *testing.T, h Harness) string {
	t.Helper()
	name := newBucket(t, h)
	if err := h.Versioning(ctxFor(t), name, true); err != nil {
		t.Fatalf("switching versioning on: %v", err)
	}
	return name
}

// PutMany writes keys concurrently; exported for provider tests that need data.
func PutMany(ctx context.Context, store objectstore.Writer, bucket string, keys []string) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	sem := make(chan struct{}, 16)
	for _, k := range keys {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := store.PutObject(ctx, bucket, k, []byte("data of "+k)); err != nil {
				errs <- fmt.Errorf("put %q: %w", k, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// ListKeys returns every key (not version) under prefix, sorted and de-duplicated.
func ListKeys(ctx context.Context, store objectstore.DataPlane, bucket, prefix string) ([]string, error) {
	var keys []string
	err := store.ListObjects(ctx, bucket, prefix, func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			keys = append(keys, o.Key)
		}
		return nil
	})
	slices.Sort(keys)
	return slices.Compact(keys), err
}

func keysUnder(prefix string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%setcd-main/v2/Full-%08d", prefix, i)
	}
	return keys
}

func testEnsureBucketIdempotent(t *testing.T, h Harness) {
	ctx := ctxFor(t)
	name := newBucket(t, h)
	for i := range 2 {
		if err := h.Store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: h.Region}); err != nil {
			t.Fatalf("EnsureBucket on an existing bucket (round %d): %v", i+1, err)
		}
	}
}

func testObjectsRoundTrip(t *testing.T, h Harness) {
	ctx := ctxFor(t)
	name := newBucket(t, h)
	if err := h.Store.PutObject(ctx, name, "a/b", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	got, err := objectstore.ReadObject(ctx, h.Store, name, "a/b")
	if err != nil || string(got) != "hello" {
		t.Fatalf("OpenObject and read = %q, %v; want hello", got, err)
	}
	if _, err := h.Store.OpenObject(ctx, name, "a/missing", ""); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("OpenObject of a missing object: %v; want ErrNotFound", err)
	}
}

func testListPrefix(t *testing.T, h Harness) {
	ctx := ctxFor(t)
	name := newBucket(t, h)
	mine := keysUnder("shoot--a--b--1/", h.ManyObjects)
	// No neighbour is named exactly "shoot--a--b--1": filesystem-backed stores (MinIO) cannot hold
	// an object and a "directory" of the same name, and real keys always live under "<entry>/".
	neighbours := []string{"shoot--a--b--10/etcd-main/v2/Full-0", "shoot--a--b--1x/y", "shoot--a--b--/z"}
	if err := PutMany(ctx, h.Store, name, append(slices.Clone(mine), neighbours...)); err != nil {
		t.Fatal(err)
	}
	pages := 0
	var got []string
	err := h.Store.ListObjects(ctx, name, "shoot--a--b--1/", func(page []objectstore.ObjectVersion) error {
		pages++
		for _, o := range page {
			got = append(got, o.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, mine) {
		t.Fatalf("listing returned %d keys, want exactly the %d under the prefix (first extra/missing matters)", len(got), len(mine))
	}
	if pages < 2 {
		t.Errorf("listing of %d objects came in %d page(s); the suite wants to cross a page boundary (raise ManyObjects)", len(mine), pages)
	}
	stop := errors.New("stop")
	if err := h.Store.ListObjects(ctx, name, "shoot--a--b--1/", func([]objectstore.ObjectVersion) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("ListObjects must return fn's error, got %v", err)
	}
}

func testDeleteObjects(t *testing.T, h Harness) {
	ctx := ctxFor(t)
	name := newBucket(t, h)
	keys := keysUnder("p/", 3)
	if err := PutMany(ctx, h.Store, name, keys); err != nil {
		t.Fatal(err)
	}
	batch := []objectstore.ObjectVersion{{Key: keys[0]}, {Key: keys[1]}, {Key: "p/never-existed"}}
	objErrs, err := h.Store.DeleteObjects(ctx, name, batch)
	if err != nil || len(objErrs) != 0 {
		t.Fatalf("DeleteObjects = %v, %v; want no errors (a missing object counts as deleted)", objErrs, err)
	}
	left, err := ListKeys(ctx, h.Store, name, "p/")
	if err != nil || !slices.Equal(left, keys[2:]) {
		t.Fatalf("after deleting two of three: %v, %v; want %v", left, err, keys[2:])
	}
	if h.Store.MaxDeleteBatch() < 1 {
		t.Fatalf("MaxDeleteBatch() = %d", h.Store.MaxDeleteBatch())
	}
}

func testDeletePrefix(t *testing.T, h Harness) {
	ctx := ctxFor(t)
	name := newBucket(t, h)
	prefix, err := objectstore.EntryPrefix("shoot--a--b--1")
	if err != nil {
		t.Fatal(err)
	}
	mine := keysUnder("shoot--a--b--1/", h.ManyObjects)
	neighbours := []string{"shoot--a--b--10/etcd-main/v2/Full-0", "shoot--a--b--1x/y", "other/shoot--a--b--1/z"}
	if err := PutMany(ctx, h.Store, name, append(slices.Clone(mine), neighbours...)); err != nil {
		t.Fatal(err)
	}
	res, err := objectstore.DeletePrefix(ctx, h.Store, name, prefix, objectstore.DeleteOptions{Parallelism: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done || res.Deleted < len(mine) || res.Locked != 0 {
		t.Fatalf("result %+v; want Done, at least %d deleted, none locked", res, len(mine))
	}
	left, err := ListKeys(ctx, h.Store, name, "")
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(neighbours)
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("after deleting the prefix the bucket holds %v; want exactly the neighbours %v", left, want)
	}
	again, err := objectstore.DeletePrefix(ctx, h.Store, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !again.Done || again.Deleted != 0 {
		t.Fatalf("second deletion = %+v, %v; want a no-op", again, err)
	}
}

func testMissingBucket(t *testing.T, h Harness) {
	ctx := ctxFor(t)
	name := h.NewBucketName()
	err := h.Store.ListObjects(ctx, name, "x/", func([]objectstore.ObjectVersion) error { return nil })
	if !errors.Is(err, objectstore.ErrBucketNotFound) {
		t.Fatalf("ListObjects on a missing bucket: %v; want ErrBucketNotFound", err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, h.Store, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done {
		t.Fatalf("DeletePrefix on a missing bucket = %+v, %v; want done", res, err)
	}
	if err := h.Store.DeleteBucket(ctx, name); err != nil {
		t.Fatalf("DeleteBucket of a missing bucket: %v; want success", err)
	}
}

func testDeleteBucketNonEmpty(t *testing.T, h Harness) {
	ctx := ctxFor(t)
	name := h.NewBucketName()
	if err := h.Store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: h.Region}); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.PutObject(ctx, name, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.DeleteBucket(ctx, name); !errors.Is(err, objectstore.ErrBucketNotEmpty) {
		t.Fatalf("DeleteBucket of a non-empty bucket: %v; want ErrBucketNotEmpty", err)
	}
	if _, err := objectstore.DeletePrefix(ctx, h.Store, name, objectstore.WholeBucket(), objectstore.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := h.Store.DeleteBucket(ctx, name); err != nil {
			t.Fatalf("DeleteBucket (round %d): %v", i+1, err)
		}
	}
}

func testBadCredentials(t *testing.T, h Harness) {
	skipUnsupported(t, h, BadCredentials)
	ctx := ctxFor(t)
	name := newBucket(t, h)
	if err := h.BadCredentials.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: h.Region}); !errors.Is(err, objectstore.ErrUnauthenticated) {
		t.Fatalf("EnsureBucket with bad credentials: %v; want ErrUnauthenticated", err)
	}
	err := h.BadCredentials.ListObjects(ctx, name, "x/", func([]objectstore.ObjectVersion) error { return nil })
	if !errors.Is(err, objectstore.ErrUnauthenticated) {
		t.Fatalf("ListObjects with bad credentials: %v; want ErrUnauthenticated", err)
	}
}

func testForeignBucket(t *testing.T, h Harness) {
	skipUnsupported(t, h, ForeignBuckets)
	ctx := ctxFor(t)
	name := h.ForeignBucket(t)
	if err := h.Store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: h.Region}); !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("EnsureBucket on someone else's bucket: %v; want ErrOwnedByOther", err)
	}
}

func testOtherRegion(t *testing.T, h Harness) {
	skipUnsupported(t, h, Regions)
	ctx := ctxFor(t)
	name := newBucket(t, h)
	err := h.Store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: h.OtherRegion})
	if !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("EnsureBucket in another region: %v; want ErrInvalidConfig", err)
	}
}
