// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package memstore is an in-memory object store (both planes and a Writer) for unit tests of the core and for the
// conformance suite's own self-test. It keeps object versions as S3 does (versioning never
// enabled, enabled, or suspended after it was on; a plain delete of a versioned object writes a
// delete marker); hooks let tests lock objects, throttle requests and mark bucket names as
// someone else's.
package memstore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5" //nolint:gosec // the content's MD5 as stores report it, not a security measure
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// PageSize is the default listing page size, small so that tests cross page boundaries cheaply.
const PageSize = 100

// Store is safe for concurrent use. Stores returned by WithPageSize share its contents.
type Store struct {
	*state

	pageSize int
	// credential is the issued credential this view presents ("": the operator's).
	credential string
}

type state struct {
	mu       sync.Mutex
	buckets  map[string]*bucket
	foreign  map[string]bool
	batch    int
	throttle int // every throttle-th DeleteObjects call is throttled; 0 never
	calls    int
	seq      int // orders versions: a higher seq is newer
	issued   issued
}

type versioning int

const (
	unversioned versioning = iota
	enabled
	suspended
)

type version struct {
	id           string // "" is S3's "null" version
	seq          int
	data         []byte
	md5          string // hex MD5 of data, as the listing reports it (ObjectVersion.ContentMD5)
	deleteMarker bool
	modified     time.Time
	excludeMark  bool // tagged x-etcd-snapshot-exclude=true (MarkExcluded)
}

type bucket struct {
	region     string
	versioning versioning
	objects    map[string][]version // newest last
	locks      map[string]time.Time // by key: every version of the key is held
	deferred   map[string]bool      // prefixes handed to DeferDeletion
}

var (
	_ objectstore.DataPlane    = (*Store)(nil)
	_ objectstore.Management   = (*Store)(nil)
	_ objectstore.Writer       = (*Store)(nil)
	_ objectstore.StreamWriter = (*Store)(nil)

	_ objectstore.ConditionalWriter = (*Store)(nil)
	_ objectstore.StreamBuffer      = (*Store)(nil)
)

// StreamBufferBytes implements objectstore.StreamBuffer: the store reads an object whole.
func (s *Store) StreamBufferBytes(size int64) int64 { return size }

// New returns an empty store whose DeleteObjects accepts batchSize objects.
func New(batchSize int) *Store {
	return &Store{state: &state{buckets: map[string]*bucket{}, foreign: map[string]bool{}, batch: batchSize, issued: issued{byID: map[string]*credential{}}}, pageSize: PageSize}
}

// WithPageSize returns a view of the same contents that lists n entries per page.
func (s *Store) WithPageSize(n int) *Store {
	return &Store{state: s.state, pageSize: n, credential: s.credential}
}

// SetForeign marks a bucket name as owned by someone else.
func (s *Store) SetForeign(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.foreign[name] = true
}

// ThrottleEvery makes every n-th DeleteObjects request fail with a throttling error (0: never).
func (s *Store) ThrottleEvery(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttle = n
}

// Lock holds every version of an object until the given time (zero: a legal hold).
func (s *Store) Lock(bucketName, key string, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buckets[bucketName].locks[key] = until
}

// SetVersioning switches versioning of a bucket on, or suspends it (off after it was on: the
// versions written meanwhile stay).
func (s *Store) SetVersioning(ctx context.Context, bucketName string, on bool) error {
	return s.withBucket(ctx, bucketName, func(b *bucket) error {
		switch {
		case on:
			b.versioning = enabled
		case b.versioning == enabled:
			b.versioning = suspended
		}
		return nil
	})
}

// EnsureBucket implements objectstore.Management.
func (s *Store) EnsureBucket(ctx context.Context, spec objectstore.Bucket) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.manage(spec.Name); err != nil {
		return err
	}
	if s.foreign[spec.Name] {
		return fmt.Errorf("bucket %q: %w", spec.Name, objectstore.ErrOwnedByOther)
	}
	b, ok := s.buckets[spec.Name]
	if !ok {
		b = &bucket{region: spec.Region, objects: map[string][]version{}, locks: map[string]time.Time{}}
		s.buckets[spec.Name] = b
	}
	if b.region != spec.Region {
		return objectstore.Invalidf("bucket %q is in region %q, not %q", spec.Name, b.region, spec.Region)
	}
	return nil
}

// DeleteBucket implements objectstore.Management.
func (s *Store) DeleteBucket(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.manage(name); err != nil {
		return err
	}
	b, ok := s.buckets[name]
	if !ok {
		return nil
	}
	if len(b.objects) > 0 {
		return fmt.Errorf("bucket %q holds versions of %d keys: %w", name, len(b.objects), objectstore.ErrBucketNotEmpty)
	}
	delete(s.buckets, name)
	return nil
}

// entry is one listed version; listings run by key, then newest version first.
type entry struct {
	key string
	seq int
	id  string
	v   objectstore.ObjectVersion
}

func (e entry) compare(o entry) int {
	return cmp.Or(strings.Compare(e.key, o.key), cmp.Compare(o.seq, e.seq))
}

// ListObjects implements objectstore.DataPlane.
func (s *Store) ListObjects(ctx context.Context, bucketName, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	var after *entry
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		page, last, more, err := s.page(bucketName, prefix, after)
		if err != nil {
			return err
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
			after = &last
		}
		if !more {
			return nil
		}
	}
}

func (s *Store) page(bucketName, prefix string, after *entry) ([]objectstore.ObjectVersion, entry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.bucket(bucketName)
	if err != nil {
		return nil, entry{}, false, err
	}
	var all []entry
	for k, versions := range b.objects {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		for i, v := range versions {
			e := entry{key: k, seq: v.seq, id: v.id, v: objectstore.ObjectVersion{
				Key: k, Version: v.id, Size: int64(len(v.data)), Modified: v.modified, ContentMD5: v.md5, ETag: v.etag(),
				Noncurrent: v.deleteMarker || i < len(versions)-1, RetainUntil: b.locks[k],
				DeleteMarker: v.deleteMarker,
			}}
			if after == nil || e.compare(*after) > 0 {
				all = append(all, e)
			}
		}
	}
	slices.SortFunc(all, entry.compare)
	more := len(all) > s.pageSize
	if more {
		all = all[:s.pageSize]
	}
	page := make([]objectstore.ObjectVersion, len(all))
	for i, e := range all {
		page[i] = e.v
	}
	var last entry
	if len(all) > 0 {
		last = all[len(all)-1]
	}
	return page, last, more, nil
}

// DeleteObjects implements objectstore.DataPlane: a named version is removed; an object without a
// version is removed where versioning was never on, and gets a delete marker where it is.
func (s *Store) DeleteObjects(ctx context.Context, bucketName string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(objects) > s.batch {
		return nil, objectstore.Invalidf("%d objects exceed the batch limit %d", len(objects), s.batch)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.throttle > 0 && s.calls%s.throttle == 0 {
		return nil, &objectstore.RetryAfterError{After: time.Millisecond, Cause: fmt.Errorf("memstore: slow down")}
	}
	b, err := s.bucket(bucketName)
	if err != nil {
		return nil, err
	}
	var errs []objectstore.ObjectError
	for _, o := range objects {
		if until, locked := b.locks[o.Key]; locked && (until.IsZero() || time.Now().Before(until)) {
			errs = append(errs, objectstore.ObjectError{Object: o, Err: &objectstore.LockedError{RetainUntil: until, Cause: fmt.Errorf("memstore: locked")}})
			continue
		}
		switch {
		case o.Version != "" || b.versioning == unversioned:
			b.remove(o.Key, o.Version)
		case b.versioning == enabled:
			id := s.newVersionID()
			b.add(o.Key, version{id: id, seq: s.seq, deleteMarker: true, modified: time.Now()})
		default: // suspended: the delete marker takes the null version's place
			b.remove(o.Key, "")
			b.add(o.Key, version{seq: s.nextSeq(), deleteMarker: true, modified: time.Now()})
		}
	}
	return errs, nil
}

func (s *state) nextSeq() int {
	s.seq++
	return s.seq
}

func (s *state) newVersionID() string { return "v" + strconv.Itoa(s.nextSeq()) }

func (b *bucket) add(key string, v version) { b.objects[key] = append(b.objects[key], v) }

func (b *bucket) remove(key, id string) {
	versions := slices.DeleteFunc(b.objects[key], func(v version) bool { return v.id == id })
	if len(versions) == 0 {
		delete(b.objects, key)
		return
	}
	b.objects[key] = versions
}

// MaxDeleteBatch implements objectstore.DataPlane.
func (s *Store) MaxDeleteBatch() int { return s.batch }

// DeferDeletion implements objectstore.Management. Locks in memory expire by themselves, so there
// is nothing to hand over; the bucket must exist. The prefix is recorded (see Deferred).
func (s *Store) DeferDeletion(ctx context.Context, bucketName, prefix string) (objectstore.Deferral, error) {
	return objectstore.Deferral{Rule: "memstore lock expiry"}, s.withBucket(ctx, bucketName, func(b *bucket) error {
		if b.deferred == nil {
			b.deferred = map[string]bool{}
		}
		b.deferred[prefix] = true
		return nil
	})
}

// Deferred reports whether DeferDeletion was asked for prefix in bucket (and the bucket was not
// deleted since).
func (s *Store) Deferred(bucketName, prefix string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[bucketName]
	return b != nil && b.deferred[prefix]
}

// PutObject implements objectstore.Writer.
func (s *Store) PutObject(ctx context.Context, bucketName, key string, data []byte) error {
	return s.put(ctx, bucketName, key, append([]byte(nil), data...))
}

// PutObjectStream implements objectstore.StreamWriter. The store keeps objects in memory, so it
// reads r whole; a reader that holds other than size bytes writes nothing.
func (s *Store) PutObjectStream(ctx context.Context, bucketName, key string, r io.Reader, size int64) error {
	return s.PutObjectStreamIf(ctx, bucketName, key, r, size, objectstore.Precondition{Replaces: &anyVersion})
}

// anyVersion is the Precondition of an unconditional write in put.
var anyVersion objectstore.ObjectVersion

// PutObjectStreamIf implements objectstore.ConditionalWriter as S3 does: the key's current
// version (not a delete marker) must be missing (cond.Replaces nil) or have the ETag of
// cond.Replaces (its version ID where it states no ETag).
func (s *Store) PutObjectStreamIf(ctx context.Context, bucketName, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	data, err := io.ReadAll(io.LimitReader(r, size+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", key, err)
	}
	if int64(len(data)) != size {
		return fmt.Errorf("object %s: the stream held %d bytes, not %d", key, len(data), size)
	}
	return s.putIf(ctx, bucketName, key, data, cond)
}

// etag is the version's entity tag as S3 lists a plain upload's: its quoted MD5 ("" for a delete
// marker).
func (v version) etag() string {
	if v.deleteMarker {
		return ""
	}
	return `"` + v.md5 + `"`
}

// put writes data (the store's own copy) as the current version of key.
func (s *Store) put(ctx context.Context, bucketName, key string, data []byte) error {
	return s.putIf(ctx, bucketName, key, data, objectstore.Precondition{Replaces: &anyVersion})
}

// putIf is put where cond holds (Replaces == &anyVersion: always).
func (s *Store) putIf(ctx context.Context, bucketName, key string, data []byte, cond objectstore.Precondition) error {
	sum := md5.Sum(data) //nolint:gosec // see the import
	return s.withBucket(ctx, bucketName, func(b *bucket) error {
		if cond.Replaces != &anyVersion {
			var current *version
			if vs := b.objects[key]; len(vs) > 0 && !vs[len(vs)-1].deleteMarker {
				current = &vs[len(vs)-1]
			}
			switch r := cond.Replaces; {
			case r == nil && current != nil:
				return fmt.Errorf("%s exists: %w", key, objectstore.ErrPreconditionFailed)
			case r != nil && current == nil:
				return fmt.Errorf("%s is missing: %w", key, objectstore.ErrPreconditionFailed)
			case r != nil && r.ETag != "" && r.ETag != current.etag(), r != nil && r.ETag == "" && r.Version != current.id:
				return fmt.Errorf("%s is another version: %w", key, objectstore.ErrPreconditionFailed)
			}
		}
		v := version{data: data, md5: hex.EncodeToString(sum[:]), modified: time.Now()}
		if b.versioning == enabled {
			v.id = s.newVersionID()
		} else {
			b.remove(key, "") // without versioning, or suspended: the null version is replaced
			s.nextSeq()
		}
		v.seq = s.seq
		b.add(key, v)
		return nil
	})
}

// OpenObject implements objectstore.DataPlane: the newest version unless it is a delete marker,
// or the version named.
func (s *Store) OpenObject(ctx context.Context, bucketName, key, versionID string) (io.ReadCloser, error) {
	var data []byte
	err := s.withBucket(ctx, bucketName, func(b *bucket) error {
		v, ok := b.find(key, versionID)
		if !ok || v.deleteMarker {
			return fmt.Errorf("object %q version %q: %w", key, versionID, objectstore.ErrNotFound)
		}
		data = append([]byte(nil), v.data...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// find returns the version id of key ("": the newest); the caller holds s.mu.
func (b *bucket) find(key, id string) (*version, bool) {
	versions := b.objects[key]
	if id == "" {
		if len(versions) == 0 {
			return nil, false
		}
		return &versions[len(versions)-1], true
	}
	for i := range versions {
		if versions[i].id == id {
			return &versions[i], true
		}
	}
	return nil, false
}

// SnapshotRule implements objectstore.DataPlane with S3's rule, which the store plays (see
// pkg/provider/aws's): with versioning enabled every key's oldest version, read by its ID, left
// out when the key has a delete marker and that version is marked; otherwise the current
// versions, unmarked.
func (s *Store) SnapshotRule(ctx context.Context, bucketName string) (objectstore.SnapshotRule, error) {
	var on bool
	if err := s.withBucket(ctx, bucketName, func(b *bucket) error { on = b.versioning == enabled; return nil }); err != nil {
		return objectstore.SnapshotRule{}, err
	}
	if !on {
		return objectstore.SnapshotRule{Source: "memstore as S3 without versioning"}, nil
	}
	return objectstore.SnapshotRule{
		Versions: objectstore.OldestVersion, Exclusion: objectstore.ExcludeMarkedIfDeleted, ReadsListedVersion: true,
		MarkOf: func(ctx context.Context, o objectstore.ObjectVersion) (bool, error) {
			var marked bool
			err := s.withBucket(ctx, bucketName, func(b *bucket) error {
				if v, ok := b.find(o.Key, o.Version); ok {
					marked = v.excludeMark
				}
				return nil
			})
			return marked, err
		},
		Source: "memstore as S3 with versioning enabled",
	}, nil
}

// MarkExcluded tags the newest version of key with etcd-backup-restore's exclude mark, as
// PutObjectTagging without a version ID does on S3.
func (s *Store) MarkExcluded(ctx context.Context, bucketName, key string) error {
	return s.withBucket(ctx, bucketName, func(b *bucket) error {
		v, ok := b.find(key, "")
		if !ok || v.deleteMarker {
			return fmt.Errorf("object %q: %w", key, objectstore.ErrNotFound)
		}
		v.excludeMark = true
		return nil
	})
}

// withBucket runs fn on the named bucket under the store's lock.
func (s *Store) withBucket(ctx context.Context, name string, fn func(*bucket) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.bucket(name)
	if err != nil {
		return err
	}
	return fn(b)
}

// bucket returns a bucket; the caller holds s.mu.
func (s *state) bucket(name string) (*bucket, error) {
	b, ok := s.buckets[name]
	if !ok {
		return nil, fmt.Errorf("bucket %q: %w", name, objectstore.ErrBucketNotFound)
	}
	return b, nil
}

// Probe implements objectstore.DataPlane.
func (s *Store) Probe(ctx context.Context, bucketName string) error {
	return s.withBucket(ctx, bucketName, func(*bucket) error { return nil })
}
