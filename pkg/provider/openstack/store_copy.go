// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// copySingleLimit is the largest source one server-side copy takes: Swift's default
// max_file_size, since a copy writes one plain object (a static large object's content is
// concatenated). A larger source is streamed through this process instead. A variable so that a
// test reaches that path with small objects.
var copySingleLimit int64 = 5 << 30

var (
	_ objectstore.ServerSideCopier  = (*store)(nil)
	_ objectstore.ConditionalCopier = (*store)(nil)
	_ objectstore.PartialCopyGuard  = (*store)(nil)
)

// CopyGuards implements objectstore.PartialCopyGuard: none. Swift's copy middleware evaluates a
// copy's conditional headers against the source (If-None-Match: * on an X-Copy-From PUT answers
// 304 for any existing source), so no destination condition reaches the write.
func (s *store) CopyGuards(objectstore.Guard) bool { return false }

// CopyObjectIf implements objectstore.ConditionalCopier: always ErrUnsupported, writing nothing
// (see CopyGuards); the caller copies unguarded with CopyObject, or streams with
// PutObjectStreamIf.
func (s *store) CopyObjectIf(_ context.Context, srcBucket string, src objectstore.ObjectVersion, _, dstKey string, cond objectstore.Precondition) error {
	return fmt.Errorf("copying %s/%s to %s: Swift's copy cannot be conditioned on its destination (%s): %w", srcBucket, src.Key, dstKey, cond.Guard(), objectstore.ErrUnsupported)
}

// CopyObject implements objectstore.ServerSideCopier with one PUT with X-Copy-From (Swift's copy
// middleware reads the source and writes the destination inside the cluster), conditioned with
// If-Match on the listed ETag (the listing's hash; without one, If-Unmodified-Since the listed
// write time), which the middleware applies to its read of the source: a source written again
// since its listing fails with 412 and nothing is written. The destination is written whole or
// not at all. A source larger than copySingleLimit, which Swift cannot copy into one object, is
// read (under the same If-Match) and written as a static large object by PutObjectStream: the
// bytes then pass through this process. Swift cannot copy a listed version of a versioned
// container by its version ID: the condition keeps the copy to the listed content.
func (s *store) CopyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string) error {
	for _, b := range []string{srcBucket, dstBucket} {
		if err := osapi.ValidateBucketName(b); err != nil {
			return err
		}
	}
	if src.Noncurrent {
		return objectstore.Invalidf("copying %s/%s: only a current version is copied, not %s", srcBucket, src.Key, src.Version)
	}
	c, err := s.swift(ctx)
	if err != nil {
		return err
	}
	cond := map[string]string{}
	if src.ETag != "" {
		cond["If-Match"] = `"` + src.ETag + `"`
	} else {
		cond["If-Unmodified-Since"] = lastModifiedOf(src.Modified).UTC().Format(http.TimeFormat)
	}
	err = s.copyOnce(ctx, c, srcBucket, src, dstBucket, dstKey, cond)
	if gophercloud.ResponseCodeIs(err, http.StatusPreconditionFailed) && src.ETag != "" {
		// A static large object's listed hash is not the ETag its reads are conditioned on
		// (a versions listing gives the manifest's own). It is conditioned on the ETag a HEAD
		// reads where that HEAD finds a static large object last written in the listed second:
		// a rewrite after the HEAD changes the ETag; one within the listed second is what Swift
		// leaves this check unable to tell.
		h, herr := objects.Get(ctx, c, srcBucket, src.Key, nil).Extract()
		if herr == nil && h.StaticLargeObject && lastModifiedOf(src.Modified).Equal(h.LastModified) {
			err = s.copyOnce(ctx, c, srcBucket, src, dstBucket, dstKey, map[string]string{"If-Match": h.ETag})
		}
	}
	return s.copyError(ctx, c, srcBucket, src.Key, dstBucket, err)
}

// lastModifiedOf is the Last-Modified header Swift sends for an object written at t: t rounded
// up to the whole second.
func lastModifiedOf(t time.Time) time.Time {
	if t.Truncate(time.Second).Equal(t) {
		return t
	}
	return t.Truncate(time.Second).Add(time.Second)
}

// copyOnce is one copy under the conditional headers cond: server-side, or streamed through
// this process for a source larger than copySingleLimit.
func (s *store) copyOnce(ctx context.Context, c *gophercloud.ServiceClient, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string, cond map[string]string) error {
	if src.Size > copySingleLimit {
		return s.copyStreamed(ctx, c, srcBucket, src, dstBucket, dstKey, cond)
	}
	headers := map[string]string{"X-Copy-From": "/" + url.PathEscape(srcBucket) + "/" + url.PathEscape(src.Key), "Content-Length": "0"}
	for k, v := range cond {
		headers[k] = v
	}
	dst := c.ServiceURL(url.PathEscape(dstBucket), url.PathEscape(dstKey))
	_, err := c.Put(ctx, dst, nil, nil, &gophercloud.RequestOpts{MoreHeaders: headers, OkCodes: []int{http.StatusCreated}})
	return err
}

// copyStreamed copies a source too large for one server-side copy through this process.
func (s *store) copyStreamed(ctx context.Context, c *gophercloud.ServiceClient, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string, cond map[string]string) error {
	opts := objects.DownloadOpts{IfMatch: cond["If-Match"]}
	if v, ok := cond["If-Unmodified-Since"]; ok {
		opts.IfUnmodifiedSince, _ = time.Parse(http.TimeFormat, v)
	}
	res := objects.Download(ctx, c, srcBucket, src.Key, opts)
	if res.Err != nil {
		return res.Err
	}
	defer func() { _ = res.Body.Close() }()
	if err := s.PutObjectStream(ctx, dstBucket, dstKey, res.Body, src.Size); err != nil {
		return fmt.Errorf("copying %s/%s to container %s through this process: %w", srcBucket, src.Key, dstBucket, err)
	}
	return nil
}

// copyError classifies a copy's error, naming both containers: 412 is a source written again
// since its listing; a 404 is the source's (ErrNotFound) unless the source is there, then the
// destination container's.
func (s *store) copyError(ctx context.Context, c *gophercloud.ServiceClient, srcBucket, srcKey, dstBucket string, err error) error {
	switch {
	case err == nil:
		return nil
	case gophercloud.ResponseCodeIs(err, http.StatusPreconditionFailed):
		return fmt.Errorf("copying %s/%s to container %s: the source was written again since it was listed: %w", srcBucket, srcKey, dstBucket, classify(err))
	case gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		if _, herr := objects.Get(ctx, c, srcBucket, srcKey, nil).Extract(); herr == nil {
			return fmt.Errorf("copying %s/%s: container %q: %w", srcBucket, srcKey, dstBucket, objectstore.ErrBucketNotFound)
		}
		return fmt.Errorf("copying %s/%s to container %s: %w: the source is gone", srcBucket, srcKey, dstBucket, objectstore.ErrNotFound)
	}
	return fmt.Errorf("copying %s/%s to container %s: %w", srcBucket, srcKey, dstBucket, classify(err))
}
