// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// S3's limits of a copy: one CopyObject copies up to 5 GiB; larger objects are copied in parts
// (UploadPartCopy) of at most 5 GiB, at least 5 MiB, at most 10,000 of them. Variables so that
// a test reaches the multipart path with small objects.
var (
	copySingleLimit int64 = 5 << 30
	copyPartSize    int64 = 512 << 20
)

var (
	_ objectstore.ServerSideCopier  = (*store)(nil)
	_ objectstore.ConditionalCopier = (*store)(nil)
)

// CopyObject implements objectstore.ServerSideCopier: one CopyObject up to 5 GiB, else a
// multipart upload of UploadPartCopy ranges, one after the other (each part is a copy inside the
// store, not a transfer through this process), aborted on any failure. Every request copies the
// listed version (src.Version) where the bucket keeps versions, and is conditioned on the
// listed ETag (x-amz-copy-source-if-match), so that a source written again after its listing,
// even within the same second, is not copied; a listing without an ETag conditions on the source
// not being written after src.Modified instead (at a second's resolution, the header's).
func (s *store) CopyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string) error {
	return s.copyObject(ctx, srcBucket, src, dstBucket, dstKey, nil)
}

// CopyObjectIf implements objectstore.ConditionalCopier: CopyObject with If-None-Match or
// If-Match on the request that stores the copy (CopyObject, or CompleteMultipartUpload), as
// PutObjectStreamIf. MinIO honours them on CompleteMultipartUpload but ignores them on CopyObject
// (its CopyObjectHandler reads no destination condition), so on an S3-compatible endpoint (the
// secret names one) every conditional copy of a non-empty object takes the multipart path:
// three requests (create, one UploadPartCopy up to the part size, complete) instead of one. An
// empty object is copied with one CopyObject, guarded only where the store honours it there.
func (s *store) CopyObjectIf(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string, cond objectstore.Precondition) error {
	return s.copyObject(ctx, srcBucket, src, dstBucket, dstKey, &cond)
}

// copyObject is CopyObject, conditioned on cond where it is not nil.
func (s *store) copyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string, cond *objectstore.Precondition) error {
	for _, b := range []string{srcBucket, dstBucket} {
		if err := awsapi.ValidateBucketName(b); err != nil {
			return err
		}
	}
	source := srcBucket + "/" + url.PathEscape(src.Key)
	// The listed version itself where the bucket keeps versions: a source written again within
	// the same second (which the time condition cannot tell) cannot splice two versions into one
	// multipart copy. An unversioned bucket lists "null": its key is all there is.
	if src.Version != "" && src.Version != "null" {
		source += "?versionId=" + url.QueryEscape(src.Version)
	}
	// The header has whole seconds; the listing may not: the next whole second is after it.
	// One condition, not both: S3 copies when If-Match holds whatever If-Unmodified-Since says.
	var ifMatch *string
	var unmodifiedSince *time.Time
	if src.ETag != "" {
		ifMatch = &src.ETag
	} else {
		unmodifiedSince = aws.Time(src.Modified.Truncate(time.Second).Add(time.Second))
	}
	if src.Size <= copySingleLimit && (cond == nil || !s.s3Compatible || src.Size == 0) {
		in := &s3.CopyObjectInput{Bucket: &dstBucket, Key: &dstKey, CopySource: &source, CopySourceIfUnmodifiedSince: unmodifiedSince, CopySourceIfMatch: ifMatch}
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sse.headers()
		in.CopySourceSSECustomerAlgorithm, in.CopySourceSSECustomerKey, in.CopySourceSSECustomerKeyMD5 = s.sse.headers()
		in.IfMatch, in.IfNoneMatch = conditionHeaders(cond)
		_, err := s.client.CopyObject(ctx, in)
		return s.copyError(srcBucket, src.Key, dstBucket, cond, err)
	}
	created := &s3.CreateMultipartUploadInput{Bucket: &dstBucket, Key: &dstKey}
	created.SSECustomerAlgorithm, created.SSECustomerKey, created.SSECustomerKeyMD5 = s.sse.headers()
	up, err := s.client.CreateMultipartUpload(ctx, created)
	if err != nil {
		return s.bucketError(dstBucket, err)
	}
	part := max(copyPartSize, (src.Size+maxParts-1)/maxParts)
	var parts []types.CompletedPart
	for number, offset := int32(1), int64(0); offset < src.Size && err == nil; number, offset = number+1, offset+part {
		end := min(offset+part, src.Size) - 1
		in := &s3.UploadPartCopyInput{Bucket: &dstBucket, Key: &dstKey, UploadId: up.UploadId, PartNumber: aws.Int32(number),
			CopySource: &source, CopySourceRange: aws.String(fmt.Sprintf("bytes=%d-%d", offset, end)), CopySourceIfUnmodifiedSince: unmodifiedSince,
			CopySourceIfMatch: ifMatch}
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sse.headers()
		in.CopySourceSSECustomerAlgorithm, in.CopySourceSSECustomerKey, in.CopySourceSSECustomerKeyMD5 = s.sse.headers()
		var out *s3.UploadPartCopyOutput
		if out, err = s.client.UploadPartCopy(ctx, in); err != nil {
			err = s.copyError(srcBucket, src.Key, dstBucket, nil, err)
			break
		}
		r := out.CopyPartResult
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(number), ETag: r.ETag,
			ChecksumCRC32: r.ChecksumCRC32, ChecksumCRC32C: r.ChecksumCRC32C, ChecksumCRC64NVME: r.ChecksumCRC64NVME,
			ChecksumSHA1: r.ChecksumSHA1, ChecksumSHA256: r.ChecksumSHA256})
	}
	if err == nil {
		done := &s3.CompleteMultipartUploadInput{Bucket: &dstBucket, Key: &dstKey, UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
		done.SSECustomerAlgorithm, done.SSECustomerKey, done.SSECustomerKeyMD5 = s.sse.headers()
		done.IfMatch, done.IfNoneMatch = conditionHeaders(cond)
		if _, cerr := s.client.CompleteMultipartUpload(ctx, done); cerr != nil {
			err = s.conditionalError(dstBucket, dstKey, cond, cerr)
		}
	}
	if err != nil {
		if _, aerr := s.client.AbortMultipartUpload(context.WithoutCancel(ctx), &s3.AbortMultipartUploadInput{Bucket: &dstBucket, Key: &dstKey, UploadId: up.UploadId}); aerr != nil {
			return fmt.Errorf("%w (aborting the upload %s failed too: %w)", err, aws.ToString(up.UploadId), s.bucketError(dstBucket, aerr))
		}
		return err
	}
	return nil
}

// copyError classifies a copy's error, naming both buckets (NoSuchBucket does not say which):
// S3 answers a copy whose source was written since with 412 PreconditionFailed, and one whose
// source is gone with NoSuchKey (ErrNotFound). Under a destination condition (cond) a 412 does
// not tell which condition failed, the source's or the destination's: either way something
// changed since the listing and nothing was written, which is ErrPreconditionFailed (as 409
// ConditionalRequestConflict, the destination's).
func (s *store) copyError(srcBucket, srcKey, dstBucket string, cond *objectstore.Precondition, err error) error {
	if err == nil {
		return nil
	}
	if code := errorCode(err); cond != nil && (code == "PreconditionFailed" || code == "ConditionalRequestConflict") {
		return fmt.Errorf("copying %s/%s to bucket %s: the source or the destination changed since they were listed (%s): %w", srcBucket, srcKey, dstBucket, code, objectstore.ErrPreconditionFailed)
	}
	if errorCode(err) == "PreconditionFailed" {
		return fmt.Errorf("copying %s/%s to bucket %s: the source was written again since it was listed: %w", srcBucket, srcKey, dstBucket, classify(err))
	}
	return fmt.Errorf("copying %s/%s to bucket %s: %w", srcBucket, srcKey, dstBucket, classify(err))
}
