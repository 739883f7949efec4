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
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const (
	// streamPartSize is the part size of a streamed write; an object of more than S3's 10,000
	// parts of it gets larger parts (streamPart).
	streamPartSize = 16 << 20
	// streamPartsInFlight bounds the parts of one object uploaded at once: its memory is at most
	// that many parts (64 MiB at the default part size).
	streamPartsInFlight = 4
	maxParts            = 10000
)

var (
	_ objectstore.StreamWriter      = (*store)(nil)
	_ objectstore.ConditionalWriter = (*store)(nil)
	_ objectstore.StreamBuffer      = (*store)(nil)
)

// StreamBufferBytes implements objectstore.StreamBuffer: one buffer of the object up to the part
// size, else streamPartsInFlight parts (64 MiB up to 156 GiB, more above: parts grow).
func (s *store) StreamBufferBytes(size int64) int64 {
	part := streamPart(size)
	if size <= part {
		return size
	}
	return streamPartsInFlight * part
}

// streamPart is the part size for an object of size bytes.
func streamPart(size int64) int64 {
	return max(streamPartSize, (size+maxParts-1)/maxParts)
}

// PutObjectStream implements objectstore.StreamWriter: one PutObject up to the part size, else a
// multipart upload of parts read one by one into buffers (at most streamPartsInFlight at once),
// aborted on any failure so that no part outlives it. Each part is a seekable buffer, so the SDK
// signs and checksums it over plain http as over https.
func (s *store) PutObjectStream(ctx context.Context, bucket, key string, r io.Reader, size int64) error {
	return s.putObjectStream(ctx, bucket, key, r, size, nil)
}

// PutObjectStreamIf implements objectstore.ConditionalWriter with S3's conditional writes on the
// request that stores the object (PutObject, or CompleteMultipartUpload after the parts):
// If-None-Match: * where the key must be missing, If-Match with the listed ETag where it replaces
// that version. S3 answers 412 PreconditionFailed (409 ConditionalRequestConflict for a
// concurrent conditional write); MinIO answers If-Match on a missing key with NoSuchKey: each is
// ErrPreconditionFailed, and a multipart upload is then aborted.
func (s *store) PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	return s.putObjectStream(ctx, bucket, key, r, size, &cond)
}

// putObjectStream is PutObjectStream, conditioned on cond where it is not nil.
func (s *store) putObjectStream(ctx context.Context, bucket, key string, r io.Reader, size int64, cond *objectstore.Precondition) error {
	if err := awsapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	if size < 0 {
		return objectstore.Invalidf("object %s: negative size %d", key, size)
	}
	part := streamPart(size)
	if size <= part {
		data := make([]byte, size)
		if err := readPart(r, data, key, 0, size); err != nil {
			return err
		}
		if err := atEnd(r, key, size); err != nil {
			return err
		}
		in := &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(size)}
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sse.headers()
		in.IfMatch, in.IfNoneMatch = conditionHeaders(cond)
		_, err := s.client.PutObject(ctx, in)
		return s.conditionalError(bucket, key, cond, err)
	}
	created := &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key}
	created.SSECustomerAlgorithm, created.SSECustomerKey, created.SSECustomerKeyMD5 = s.sse.headers()
	up, err := s.client.CreateMultipartUpload(ctx, created)
	if err != nil {
		return s.bucketError(bucket, err)
	}
	parts, err := s.uploadParts(ctx, bucket, key, up.UploadId, r, size, part)
	if err == nil {
		err = atEnd(r, key, size)
	}
	if err == nil {
		done := &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
		done.SSECustomerAlgorithm, done.SSECustomerKey, done.SSECustomerKeyMD5 = s.sse.headers()
		done.IfMatch, done.IfNoneMatch = conditionHeaders(cond)
		if _, cerr := s.client.CompleteMultipartUpload(ctx, done); cerr != nil {
			err = s.conditionalError(bucket, key, cond, cerr)
		}
	}
	if err != nil {
		// Its own context: a cancelled copy must still not leave parts behind (they are billed).
		if _, aerr := s.client.AbortMultipartUpload(context.WithoutCancel(ctx), &s3.AbortMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId}); aerr != nil {
			return fmt.Errorf("%w (aborting the upload %s failed too: %w)", err, aws.ToString(up.UploadId), s.bucketError(bucket, aerr))
		}
		return err
	}
	return nil
}

// uploadParts reads size bytes from r in parts of part bytes and uploads them, at most
// streamPartsInFlight at once, in order of their numbers. The first failure stops the reading.
func (s *store) uploadParts(ctx context.Context, bucket, key string, uploadID *string, r io.Reader, size, part int64) ([]types.CompletedPart, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu     sync.Mutex
		parts  []types.CompletedPart
		failed error
		wg     sync.WaitGroup
		free   = make(chan []byte, streamPartsInFlight)
	)
	for range streamPartsInFlight {
		free <- nil // allocated on first use: a small object's last part is small
	}
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if failed == nil {
			failed = err
			cancel()
		}
	}
	for number, offset := int32(1), int64(0); offset < size; number, offset = number+1, offset+part {
		var buf []byte
		select {
		case buf = <-free:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		n := min(part, size-offset)
		if int64(cap(buf)) < n {
			buf = make([]byte, part)
		}
		buf = buf[:n]
		if err := readPart(r, buf, key, offset, size); err != nil {
			fail(err)
			break
		}
		wg.Go(func() {
			defer func() { free <- buf }()
			in := &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: uploadID, PartNumber: aws.Int32(number), Body: bytes.NewReader(buf), ContentLength: aws.Int64(n)}
			in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sse.headers()
			out, err := s.client.UploadPart(ctx, in)
			if err != nil {
				fail(s.bucketError(bucket, err))
				return
			}
			mu.Lock()
			defer mu.Unlock()
			parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(number), ETag: out.ETag,
				ChecksumCRC32: out.ChecksumCRC32, ChecksumCRC32C: out.ChecksumCRC32C, ChecksumCRC64NVME: out.ChecksumCRC64NVME,
				ChecksumSHA1: out.ChecksumSHA1, ChecksumSHA256: out.ChecksumSHA256})
		})
	}
	wg.Wait()
	if failed != nil {
		return nil, failed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(parts, func(a, b types.CompletedPart) int { return int(aws.ToInt32(a.PartNumber) - aws.ToInt32(b.PartNumber)) })
	return parts, nil
}

// readPart fills buf from r, the bytes from offset of an object of size bytes.
func readPart(r io.Reader, buf []byte, key string, offset, size int64) error {
	n, err := io.ReadFull(r, buf)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("object %s: the stream ended after %d of %d bytes", key, offset+int64(n), size)
	case err != nil:
		return fmt.Errorf("object %s: reading the stream at byte %d: %w", key, offset+int64(n), err)
	}
	return nil
}

// atEnd checks that r holds no more than the size bytes read.
func atEnd(r io.Reader, key string, size int64) error {
	var one [1]byte
	n, err := io.ReadFull(r, one[:])
	switch {
	case n > 0:
		return fmt.Errorf("object %s: the stream holds more than %d bytes", key, size)
	case errors.Is(err, io.EOF):
		return nil
	default:
		return fmt.Errorf("object %s: reading the stream's end: %w", key, err)
	}
}

// conditionHeaders are S3's If-Match and If-None-Match for cond (none for nil).
func conditionHeaders(cond *objectstore.Precondition) (ifMatch, ifNoneMatch *string) {
	switch {
	case cond == nil:
		return nil, nil
	case cond.Replaces == nil:
		return nil, aws.String("*")
	default:
		return aws.String(cond.Replaces.ETag), nil
	}
}

// conditionalError classifies the error of a request that stores an object under cond: a
// precondition S3 or MinIO refused is ErrPreconditionFailed; anything else as bucketError.
func (s *store) conditionalError(bucket, key string, cond *objectstore.Precondition, err error) error {
	if err == nil {
		return nil
	}
	if cond != nil {
		switch code := errorCode(err); {
		case code == "PreconditionFailed" || code == "ConditionalRequestConflict" || (code == "NoSuchKey" && cond.Replaces != nil):
			return fmt.Errorf("writing %s to bucket %s: %s: %w", key, bucket, code, objectstore.ErrPreconditionFailed)
		}
	}
	return s.bucketError(bucket, err)
}
