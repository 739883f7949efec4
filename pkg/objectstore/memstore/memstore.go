// Package memstore is an in-memory objectstore.Store for unit tests of the core and for the
// conformance suite's own self-test. It is not versioned; hooks let tests lock objects, throttle
// requests and mark bucket names as someone else's.
package memstore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// PageSize is the listing page size, small so that tests cross page boundaries cheaply.
const PageSize = 100

// Store is safe for concurrent use.
type Store struct {
	mu       sync.Mutex
	buckets  map[string]*bucket
	foreign  map[string]bool
	batch    int
	throttle int // every throttle-th DeleteObjects call is throttled; 0 never
	calls    int
}

type bucket struct {
	region  string
	objects map[string][]byte
	locks   map[string]time.Time
}

var _ objectstore.Store = (*Store)(nil)

// New returns an empty store whose DeleteObjects accepts batchSize objects.
func New(batchSize int) *Store {
	return &Store{buckets: map[string]*bucket{}, foreign: map[string]bool{}, batch: batchSize}
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

// Lock holds an object until the given time (zero: a legal hold).
func (s *Store) Lock(bucketName, key string, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buckets[bucketName].locks[key] = until
}

// EnsureBucket implements objectstore.Store.
func (s *Store) EnsureBucket(ctx context.Context, spec objectstore.Bucket) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.foreign[spec.Name] {
		return fmt.Errorf("bucket %q: %w", spec.Name, objectstore.ErrOwnedByOther)
	}
	b, ok := s.buckets[spec.Name]
	if !ok {
		b = &bucket{region: spec.Region, objects: map[string][]byte{}, locks: map[string]time.Time{}}
		s.buckets[spec.Name] = b
	}
	if b.region != spec.Region {
		return fmt.Errorf("%w: bucket %q is in region %q, not %q", objectstore.ErrInvalidConfig, spec.Name, b.region, spec.Region)
	}
	return nil
}

// DeleteBucket implements objectstore.Store.
func (s *Store) DeleteBucket(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[name]
	if !ok {
		return nil
	}
	if len(b.objects) > 0 {
		return fmt.Errorf("bucket %q holds %d objects: %w", name, len(b.objects), objectstore.ErrBucketNotEmpty)
	}
	delete(s.buckets, name)
	return nil
}

// ListObjects implements objectstore.Store.
func (s *Store) ListObjects(ctx context.Context, bucketName, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	after := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		page, more, err := s.page(bucketName, prefix, after)
		if err != nil {
			return err
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
			after = page[len(page)-1].Key
		}
		if !more {
			return nil
		}
	}
}

func (s *Store) page(bucketName, prefix, after string) ([]objectstore.ObjectVersion, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.bucket(bucketName)
	if err != nil {
		return nil, false, err
	}
	var keys []string
	for k := range b.objects {
		if strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	more := len(keys) > PageSize
	if more {
		keys = keys[:PageSize]
	}
	page := make([]objectstore.ObjectVersion, len(keys))
	for i, k := range keys {
		page[i] = objectstore.ObjectVersion{Key: k}
	}
	return page, more, nil
}

// DeleteObjects implements objectstore.Store.
func (s *Store) DeleteObjects(ctx context.Context, bucketName string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(objects) > s.batch {
		return nil, fmt.Errorf("%w: %d objects exceed the batch limit %d", objectstore.ErrInvalidConfig, len(objects), s.batch)
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
		delete(b.objects, o.Key)
	}
	return errs, nil
}

// MaxDeleteBatch implements objectstore.Store.
func (s *Store) MaxDeleteBatch() int { return s.batch }

// DeferDeletion implements objectstore.Store. Locks in memory expire by themselves, so there
// is nothing to hand over; the bucket must exist.
func (s *Store) DeferDeletion(ctx context.Context, bucketName, _ string) (objectstore.Deferral, error) {
	return objectstore.Deferral{Rule: "memstore lock expiry"}, s.withBucket(ctx, bucketName, func(*bucket) error { return nil })
}

// PutObject implements objectstore.Store.
func (s *Store) PutObject(ctx context.Context, bucketName, key string, data []byte) error {
	return s.withBucket(ctx, bucketName, func(b *bucket) error {
		b.objects[key] = append([]byte(nil), data...)
		return nil
	})
}

// GetObject implements objectstore.Store.
func (s *Store) GetObject(ctx context.Context, bucketName, key string) ([]byte, error) {
	var data []byte
	err := s.withBucket(ctx, bucketName, func(b *bucket) error {
		stored, ok := b.objects[key]
		if !ok {
			return fmt.Errorf("object %q: %w", key, objectstore.ErrNotFound)
		}
		data = append([]byte(nil), stored...)
		return nil
	})
	return data, err
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
func (s *Store) bucket(name string) (*bucket, error) {
	b, ok := s.buckets[name]
	if !ok {
		return nil, fmt.Errorf("bucket %q: %w", name, objectstore.ErrBucketNotFound)
	}
	return b, nil
}
