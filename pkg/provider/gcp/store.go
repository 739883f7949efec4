package gcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const (
	// maxDeleteBatch is how many objects one DeleteObjects call takes. GCS deletes one object per
	// request, so a batch is a unit of work of the engine, not a request.
	maxDeleteBatch = 100
	// deleteParallelism is how many single deletes of one batch are in flight at once; the
	// engine runs several batches at once and lowers their number when GCS throttles.
	deleteParallelism = 16
	// listPageSize is the size of a listing page (GCS's maximum is 1000).
	listPageSize = 1000
	// deferParallelism is how many objects DeferDeletion marks at once.
	deferParallelism = 16
)

// store is one GCS client for one request.
type store struct {
	client    *storage.Client
	projectID string
}

var _ objectstore.Store = (*store)(nil)

// MaxDeleteBatch implements objectstore.Store.
func (s *store) MaxDeleteBatch() int { return maxDeleteBatch }

// PutObject implements objectstore.Store.
func (s *store) PutObject(ctx context.Context, bucket, key string, data []byte) error {
	w := s.client.Bucket(bucket).Object(key).NewWriter(ctx)
	w.ChunkSize = 0 // one request: backup objects of the suite are small
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return classifyBucket(err)
	}
	return classifyBucket(w.Close())
}

// GetObject implements objectstore.Store.
func (s *store) GetObject(ctx context.Context, bucket, key string) ([]byte, error) {
	r, err := s.client.Bucket(bucket).Object(key).NewReader(ctx)
	if err != nil {
		return nil, classify(err)
	}
	defer r.Close()
	return io.ReadAll(r)
}

// classifyBucket classifies errors of requests on a bucket's objects where a 404 can only mean
// that the bucket is missing (uploads).
func classifyBucket(err error) error {
	if err != nil && statusOf(err) == http.StatusNotFound {
		return fmt.Errorf("%w: %w", objectstore.ErrBucketNotFound, err)
	}
	return classify(err)
}

// ListObjects implements objectstore.Store. Every generation is listed (noncurrent ones too, on a
// bucket that ever had versioning), each with its generation, so that deletions name exactly the
// generation they saw and are safe to retry.
func (s *store) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	q := &storage.Query{Prefix: prefix, Versions: true}
	if err := q.SetAttrSelection([]string{"Name", "Generation"}); err != nil {
		return err
	}
	pager := iterator.NewPager(s.client.Bucket(bucket).Objects(ctx, q), listPageSize, "")
	for {
		var attrs []*storage.ObjectAttrs
		next, err := pager.NextPage(&attrs)
		if err != nil {
			return classifyBucket(err)
		}
		if len(attrs) > 0 {
			page := make([]objectstore.ObjectVersion, len(attrs))
			for i, a := range attrs {
				page[i] = objectstore.ObjectVersion{Key: a.Name, Version: strconv.FormatInt(a.Generation, 10)}
			}
			if err := fn(page); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
	}
}

// object returns the handle of one object version: a listed generation, or the live object.
func (s *store) object(bucket string, o objectstore.ObjectVersion) (*storage.ObjectHandle, error) {
	h := s.client.Bucket(bucket).Object(o.Key)
	if o.Version == "" {
		// Deleting "whatever is live" under a prefix that is being deleted is idempotent for
		// the engine (a missing object counts as deleted), so retries are allowed.
		return h.Retryer(storage.WithPolicy(storage.RetryAlways)), nil
	}
	gen, err := strconv.ParseInt(o.Version, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: object %q: generation %q is not a number", objectstore.ErrInvalidConfig, o.Key, o.Version)
	}
	// With a generation the request is idempotent and the SDK retries it on 429 and 5xx: it can
	// only ever delete the generation that was listed, never a newer object of the same name.
	return h.Generation(gen), nil
}

// DeleteObjects implements objectstore.Store: one delete per object, deleteParallelism at once,
// every outcome classified; an object a retention policy or hold protects is reported as locked.
func (s *store) DeleteObjects(ctx context.Context, bucket string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	if len(objects) > maxDeleteBatch {
		return nil, fmt.Errorf("%w: %d objects exceed the batch size of %d", objectstore.ErrInvalidConfig, len(objects), maxDeleteBatch)
	}
	return objectstore.ForEachObject(ctx, objects, deleteParallelism, func(ctx context.Context, o objectstore.ObjectVersion) error {
		h, err := s.object(bucket, o)
		if err != nil {
			return err
		}
		err = h.Delete(ctx)
		if statusOf(err) == http.StatusForbidden {
			return s.lockedOrForbidden(ctx, h, err)
		}
		return classify(err)
	}), nil
}

// lockedOrForbidden classifies a refused delete by the object's own metadata (a retention policy
// not yet met, an object retention, a hold), never by message text.
func (s *store) lockedOrForbidden(ctx context.Context, h *storage.ObjectHandle, deleteErr error) error {
	attrs, err := h.Attrs(ctx)
	if err != nil {
		return classify(deleteErr)
	}
	now := time.Now()
	until := attrs.RetentionExpirationTime
	if attrs.Retention != nil && attrs.Retention.RetainUntil.After(until) {
		until = attrs.Retention.RetainUntil
	}
	switch {
	case until.After(now):
		return &objectstore.LockedError{RetainUntil: until, Cause: deleteErr}
	case attrs.EventBasedHold || attrs.TemporaryHold:
		return &objectstore.LockedError{Cause: deleteErr}
	}
	return classify(deleteErr)
}

// DeferDeletion implements objectstore.Store. GCS allows 100 lifecycle rules per bucket, too few
// for one per entry, so the bucket carries one rule (see deferredDeletionRule) that deletes every
// object whose custom time is set, once its retention allows; this marks the objects under
// prefix with the current time. Marks that are already set are kept (custom time can only move
// forward), so a deferral interrupted by a timeout resumes where it stopped.
func (s *store) DeferDeletion(ctx context.Context, bucket, prefix string) (objectstore.Deferral, error) {
	return objectstore.Deferral{Rule: "lifecycle rule deleting objects with a custom time"}, s.deferDeletion(ctx, bucket, prefix)
}

func (s *store) deferDeletion(ctx context.Context, bucket, prefix string) error {
	if err := s.ensureDeferralRule(ctx, bucket); err != nil {
		return err
	}
	q := &storage.Query{Prefix: prefix}
	if err := q.SetAttrSelection([]string{"Name", "Generation", "CustomTime"}); err != nil {
		return err
	}
	now := time.Now().UTC()
	var unmarked []objectstore.ObjectVersion
	it := s.client.Bucket(bucket).Objects(ctx, q)
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return classifyBucket(err)
		}
		if a.CustomTime.IsZero() {
			unmarked = append(unmarked, objectstore.ObjectVersion{Key: a.Name})
		}
		if len(unmarked) == listPageSize {
			if err := s.mark(ctx, bucket, unmarked, now); err != nil {
				return err
			}
			unmarked = unmarked[:0]
		}
	}
	return s.mark(ctx, bucket, unmarked, now)
}

func (s *store) mark(ctx context.Context, bucket string, objects []objectstore.ObjectVersion, at time.Time) error {
	failed := objectstore.ForEachObject(ctx, objects, deferParallelism, func(ctx context.Context, o objectstore.ObjectVersion) error {
		_, err := s.client.Bucket(bucket).Object(o.Key).Update(ctx, storage.ObjectAttrsToUpdate{CustomTime: at})
		return classify(err)
	})
	if len(failed) > 0 {
		return fmt.Errorf("marking %d objects for deferred deletion, first %q: %w", len(failed), failed[0].Object.Key, failed[0].Err)
	}
	return nil
}

// DeleteBucket implements objectstore.Store.
func (s *store) DeleteBucket(ctx context.Context, name string) error {
	err := s.client.Bucket(name).Delete(ctx)
	switch {
	case err == nil, errors.Is(err, storage.ErrBucketNotExist), statusOf(err) == http.StatusNotFound:
		return nil
	case statusOf(err) == http.StatusConflict, statusOf(err) == http.StatusPreconditionFailed:
		// GCS answers 409 for a bucket that still holds objects (emulators 412).
		return fmt.Errorf("%w: %w", objectstore.ErrBucketNotEmpty, err)
	}
	return classify(err)
}
