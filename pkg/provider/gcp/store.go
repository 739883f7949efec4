// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

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
	rawstorage "google.golang.org/api/storage/v1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const (
	// maxDeleteBatch is how many objects one DeleteObjects call takes. GCS deletes one object per
	// request, so a batch is a unit of work of the engine, not a request.
	maxDeleteBatch = 100
	// deleteParallelism is how many single deletes of one batch are in flight at once; the
	// engine runs several batches at once and lowers their number when GCS throttles.
	deleteParallelism = 16
	// maxListPageSize is the largest listing page GCS returns.
	maxListPageSize = 1000
	// deferParallelism is how many objects DeferDeletion marks at once.
	deferParallelism = 16
)

// store is one GCS client for one request.
type store struct {
	client *storage.Client
	// raw is the JSON API on the same authorized client, for the bucket read that needs no more
	// than storage.buckets.get (the SDK's reads ask for ACLs too).
	raw       *rawstorage.Service
	projectID string
	// pageSize is the listing page size (0: maxListPageSize).
	pageSize int
}

// management is the management plane: the data plane's clients and a bucket's providerConfig.
type management struct {
	*store

	// cfg is the bucket's providerConfig, which EnsureBucket converges to (never nil).
	cfg *gcpapi.BackupBucketConfig
}

// listPageSize is the page size of the store's listings.
func (s *store) listPageSize() int {
	if s.pageSize <= 0 || s.pageSize > maxListPageSize {
		return maxListPageSize
	}
	return s.pageSize
}

var (
	_ objectstore.DataPlane  = (*store)(nil)
	_ objectstore.Writer     = (*store)(nil)
	_ objectstore.Management = (*management)(nil)
)

// MaxDeleteBatch implements objectstore.DataPlane.
func (s *store) MaxDeleteBatch() int { return maxDeleteBatch }

// PutObject implements objectstore.Writer.
func (s *store) PutObject(ctx context.Context, bucket, key string, data []byte) error {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	w := s.client.Bucket(bucket).Object(key).NewWriter(ctx)
	w.ChunkSize = 0 // one request: backup objects of the suite are small
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return classifyBucket(err)
	}
	return classifyBucket(w.Close())
}

// OpenObject implements objectstore.DataPlane.
func (s *store) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return nil, err
	}
	h, err := s.object(bucket, objectstore.ObjectVersion{Key: key, Version: version})
	if err != nil {
		return nil, err
	}
	r, err := h.NewReader(ctx)
	if err != nil {
		return nil, classify(err)
	}
	return r, nil
}

// ListObjects implements objectstore.DataPlane. Every generation is listed (noncurrent ones too, on a
// bucket that ever had versioning), each with its generation, so that deletions name exactly the
// generation they saw and are safe to retry.
func (s *store) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	q := &storage.Query{Prefix: prefix, Versions: true}
	// Only what the entry needs, all of it in the listing itself: no request per object.
	if err := q.SetAttrSelection(listAttrs); err != nil {
		return err
	}
	pager := iterator.NewPager(s.client.Bucket(bucket).Objects(ctx, q), s.listPageSize(), "")
	for {
		var attrs []*storage.ObjectAttrs
		next, err := pager.NextPage(&attrs)
		if err != nil {
			if err = classifyBucket(err); errors.Is(err, objectstore.ErrBucketNotFound) {
				return fmt.Errorf("bucket %q: %w", bucket, err)
			}
			return err
		}
		if len(attrs) > 0 {
			page := make([]objectstore.ObjectVersion, len(attrs))
			for i, a := range attrs {
				page[i] = listed(a)
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

// listAttrs are the fields a listing asks GCS for.
// Metadata carries etcd-backup-restore's exclude mark (see snapshotRule).
var listAttrs = []string{"Name", "Generation", "Size", "Created", "Updated", "Deleted", "RetentionExpirationTime", "Retention", "Metadata"}

// listed is the object version of one listed generation. A generation with a deletion time is
// noncurrent (GCS has no delete markers: deleting the live object makes it noncurrent). The
// retention is the later of the bucket policy's expiry and the object's own retention, as for a
// refused deletion (see lockedOrForbidden).
func listed(a *storage.ObjectAttrs) objectstore.ObjectVersion {
	modified := a.Created // when this generation was written; Updated moves with metadata changes
	if modified.IsZero() {
		modified = a.Updated
	}
	until := a.RetentionExpirationTime
	if a.Retention != nil && a.Retention.RetainUntil.After(until) {
		until = a.Retention.RetainUntil
	}
	return objectstore.ObjectVersion{
		Key:         a.Name,
		Version:     strconv.FormatInt(a.Generation, 10),
		Size:        a.Size,
		Modified:    modified,
		Noncurrent:  !a.Deleted.IsZero(),
		RetainUntil: until,
		ExcludeMark: a.Metadata[objectstore.ExcludeMarkKey] == "true",
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
		return nil, objectstore.Invalidf("object %q: generation %q is not a number", o.Key, o.Version)
	}
	// With a generation the request is idempotent and the SDK retries it on 429 and 5xx: it can
	// only ever delete the generation that was listed, never a newer object of the same name.
	return h.Generation(gen), nil
}

// DeleteObjects implements objectstore.DataPlane: one delete per object, deleteParallelism at once,
// every outcome classified; an object a retention policy or hold protects is reported as locked.
func (s *store) DeleteObjects(ctx context.Context, bucket string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return nil, err
	}
	if len(objects) > maxDeleteBatch {
		return nil, objectstore.Invalidf("%d objects exceed the batch size of %d", len(objects), maxDeleteBatch)
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

// Probe implements objectstore.DataPlane with objects.list of at most one object (live objects
// only, name only): storage.objects.list is a permission every credential the extension hands
// out has, unlike storage.buckets.get, which a generated service account lacks.
func (s *store) Probe(ctx context.Context, bucket string) error {
	if err := gcpapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	q := &storage.Query{}
	if err := q.SetAttrSelection([]string{"Name"}); err != nil {
		return err
	}
	it := s.client.Bucket(bucket).Objects(ctx, q)
	it.PageInfo().MaxSize = 1
	if _, err := it.Next(); err != nil && !errors.Is(err, iterator.Done) {
		if err = classifyBucket(err); errors.Is(err, objectstore.ErrBucketNotFound) {
			return fmt.Errorf("bucket %q: %w", bucket, err)
		}
		return err
	}
	return nil
}
