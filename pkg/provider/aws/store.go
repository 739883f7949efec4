// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// maxDeleteBatch is S3's limit of keys per DeleteObjects request.
const maxDeleteBatch = 1000

// store is one S3 client for one request: the data plane (and the Writer of the tests).
type store struct {
	client *s3.Client
	// regionOverride is the secret's "region" key: for S3-compatible stores whose region is not
	// the seed's, it wins over the bucket's spec.region.
	regionOverride string
	// pageSize is the listing page size; 0 is S3's default (1000).
	pageSize int32
	// credentialKeys names the secret keys the credentials came from, for errors that refuse them.
	credentialKeys string
	// sse is the secret's customer-provided encryption key (SSE-C), nil without one: every
	// request that writes or reads an object's content sends it, as etcd-backup-restore does.
	sse *customerKey

	// locks caches, per bucket, the bucket's Object Lock configuration (lockConfig), for
	// classifying errors and for the retention of listed versions.
	locks sync.Map
	// lockUnknown remembers, per bucket, that a listing could not read the Object Lock
	// configuration: later listings of this store do not ask again (they report no retention).
	lockUnknown sync.Map
}

// lockConfig is what the extension reads of a bucket's Object Lock configuration.
type lockConfig struct {
	enabled bool
	// years and days are the default retention of new versions (both zero: none).
	years, days int32
}

// retainUntil is when the bucket's default retention of a version written at modified ends;
// zero without a default retention.
func (c lockConfig) retainUntil(modified time.Time) time.Time {
	if !c.enabled || (c.years == 0 && c.days == 0) || modified.IsZero() {
		return time.Time{}
	}
	return modified.AddDate(int(c.years), 0, int(c.days))
}

// management is the management plane: the data plane's client and a bucket's providerConfig.
type management struct {
	*store

	// cfg is the bucket's providerConfig, which EnsureBucket converges to (never nil).
	cfg *awsapi.BackupBucketConfig
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
	if err := awsapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	in := &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
	in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sse.headers()
	_, err := s.client.PutObject(ctx, in)
	return s.bucketError(bucket, err)
}

// OpenObject implements objectstore.DataPlane.
func (s *store) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	if err := awsapi.ValidateBucketName(bucket); err != nil {
		return nil, err
	}
	in := &s3.GetObjectInput{Bucket: &bucket, Key: &key}
	in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sse.headers()
	if version != "" {
		in.VersionId = &version
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		return nil, s.readError(ctx, bucket, key, err)
	}
	return out.Body, nil
}

// ListObjects implements objectstore.DataPlane with ListObjectVersions alone, one request per
// page: it lists every version and delete marker of a versioned bucket (Enabled or Suspended)
// and the objects of one that never was (each as the version "null", which DeleteObjects
// accepts), so no GetBucketVersioning is needed to choose the request, and a bucket whose
// versioning changed between two listings can never be listed as empty by the wrong request.
// Every policy the extension documents or hands out grants s3:ListBucketVersions.
func (s *store) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	if err := awsapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	// The listing does not carry an object's retention; the bucket's default retention, applied
	// to the write time, is what can be told without a request per object. It is read only once
	// a page holds a version written with versioning on (an ID other than "null"): Object Lock
	// needs versioning, and its default retention applies to versions written since, so an
	// unversioned bucket's listing costs no lookup.
	var lock *lockConfig
	pages := s3.NewListObjectVersionsPaginator(s.client, &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: &prefix, MaxKeys: s.maxKeys()})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return s.bucketError(bucket, err)
		}
		page := make([]objectstore.ObjectVersion, 0, len(out.Versions)+len(out.DeleteMarkers))
		for _, v := range out.Versions {
			modified := aws.ToTime(v.LastModified)
			o := objectstore.ObjectVersion{
				Key: aws.ToString(v.Key), Version: aws.ToString(v.VersionId),
				Size: aws.ToInt64(v.Size), Modified: modified, Noncurrent: !aws.ToBool(v.IsLatest),
				ETag: aws.ToString(v.ETag),
			}
			if o.Version != "" && o.Version != nullVersion {
				if lock == nil {
					l := s.listingLock(ctx, bucket)
					lock = &l
				}
				o.RetainUntil = lock.retainUntil(modified)
			}
			page = append(page, o)
		}
		for _, m := range out.DeleteMarkers {
			// A delete marker is never what a read returns, even the latest one; it has no
			// retention of its own.
			page = append(page, objectstore.ObjectVersion{
				Key: aws.ToString(m.Key), Version: aws.ToString(m.VersionId),
				Modified: aws.ToTime(m.LastModified), Noncurrent: true, DeleteMarker: true,
			})
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
	}
	return nil
}

// nullVersion is S3's version ID of an object written while the bucket's versioning was off.
const nullVersion = "null"

// listingLock is the bucket's Object Lock configuration for a listing. A failed lookup (for
// example credentials without s3:GetBucketObjectLockConfiguration) must not fail the listing:
// it reports no retention, and this store does not ask again for its listings.
func (s *store) listingLock(ctx context.Context, bucket string) lockConfig {
	if _, unknown := s.lockUnknown.Load(bucket); unknown {
		return lockConfig{}
	}
	lock, err := s.objectLock(ctx, bucket)
	if err != nil {
		s.lockUnknown.Store(bucket, struct{}{})
		return lockConfig{}
	}
	return lock
}

func (s *store) maxKeys() *int32 {
	if s.pageSize <= 0 {
		return nil
	}
	return &s.pageSize
}

// DeleteObjects implements objectstore.DataPlane with one quiet DeleteObjects request: S3 then
// answers with the failed keys only, and every one of them is classified.
func (s *store) DeleteObjects(ctx context.Context, bucket string, objects []objectstore.ObjectVersion) ([]objectstore.ObjectError, error) {
	if len(objects) == 0 {
		return nil, nil
	}
	if err := awsapi.ValidateBucketName(bucket); err != nil {
		return nil, err
	}
	if len(objects) > maxDeleteBatch {
		return nil, objectstore.Invalidf("%d objects exceed S3's limit of %d per request", len(objects), maxDeleteBatch)
	}
	ids := make([]types.ObjectIdentifier, len(objects))
	for i, o := range objects {
		ids[i] = types.ObjectIdentifier{Key: aws.String(o.Key)}
		if o.Version != "" {
			ids[i].VersionId = aws.String(o.Version)
		}
	}
	out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &bucket, Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
	if err != nil {
		return nil, s.bucketError(bucket, err)
	}
	var errs []objectstore.ObjectError
	for _, e := range out.Errors {
		obj := objectstore.ObjectVersion{Key: aws.ToString(e.Key), Version: aws.ToString(e.VersionId)}
		errs = append(errs, objectstore.ObjectError{Object: obj, Err: s.objectError(ctx, bucket, obj, aws.ToString(e.Code), aws.ToString(e.Message))})
	}
	return errs, nil
}

// objectError classifies one failed key. Stores answer differently for an object under Object
// Lock (AWS: AccessDenied, as for a missing permission; MinIO: InvalidRequest), so on a bucket
// with Object Lock the object's own retention and legal hold decide (and give the date the lock
// ends), not the code. When the bucket's lock configuration cannot be read, the key stays a
// failure that says so: it is never taken for an unlocked object, nor for a locked one.
func (s *store) objectError(ctx context.Context, bucket string, obj objectstore.ObjectVersion, code, message string) error {
	err := classifyCode(code, message)
	if errors.Is(err, objectstore.ErrNotFound) || errors.Is(err, objectstore.ErrThrottled) {
		return err
	}
	locking, lerr := s.objectLockEnabled(ctx, bucket)
	if lerr != nil {
		return fmt.Errorf("%w (whether Object Lock holds it is unknown: %w)", err, lerr)
	}
	if !locking {
		return err
	}
	var version *string
	if obj.Version != "" {
		version = aws.String(obj.Version)
	}
	if hold, herr := s.client.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: &bucket, Key: &obj.Key, VersionId: version}); herr == nil &&
		hold.LegalHold != nil && hold.LegalHold.Status == types.ObjectLockLegalHoldStatusOn {
		return &objectstore.LockedError{Cause: err}
	}
	ret, rerr := s.client.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: &bucket, Key: &obj.Key, VersionId: version})
	if rerr == nil && ret.Retention != nil && ret.Retention.RetainUntilDate != nil && ret.Retention.RetainUntilDate.After(time.Now()) {
		return &objectstore.LockedError{RetainUntil: *ret.Retention.RetainUntilDate, Cause: err}
	}
	return err
}

// objectLockEnabled reports whether Object Lock is on for the bucket.
func (s *store) objectLockEnabled(ctx context.Context, bucket string) (bool, error) {
	lock, err := s.objectLock(ctx, bucket)
	return lock.enabled, err
}

// objectLock reads the bucket's Object Lock configuration. Only a definite answer is cached: a
// configuration that is absent means off; a failed lookup is returned, and asked again by the
// next caller.
func (s *store) objectLock(ctx context.Context, bucket string) (lockConfig, error) {
	if v, ok := s.locks.Load(bucket); ok {
		return v.(lockConfig), nil
	}
	out, err := s.client.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &bucket})
	if err != nil && errorCode(err) != "ObjectLockConfigurationNotFoundError" {
		return lockConfig{}, fmt.Errorf("reading the Object Lock configuration of bucket %q: %w", bucket, s.bucketError(bucket, err))
	}
	var lock lockConfig
	if err == nil && out.ObjectLockConfiguration != nil {
		c := out.ObjectLockConfiguration
		lock.enabled = c.ObjectLockEnabled == types.ObjectLockEnabledEnabled
		if c.Rule != nil && c.Rule.DefaultRetention != nil {
			lock.years, lock.days = aws.ToInt32(c.Rule.DefaultRetention.Years), aws.ToInt32(c.Rule.DefaultRetention.Days)
		}
	}
	s.locks.Store(bucket, lock)
	return lock, nil
}

// Probe implements objectstore.DataPlane with one ListObjectsV2 of at most one key (s3:ListBucket,
// which every policy the extension hands out grants): one request, where a listing asks for the
// bucket's versioning first.
func (s *store) Probe(ctx context.Context, bucket string) error {
	if err := awsapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket, MaxKeys: aws.Int32(1)})
	return s.bucketError(bucket, err)
}
