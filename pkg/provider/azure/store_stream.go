// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const (
	// streamBlocksInFlight bounds the blocks of one object staged at once: its memory is at
	// most that many blocks (32 MiB at the default block size).
	streamBlocksInFlight = 4
	// maxBlocks is Azure's limit of committed blocks in one block blob.
	maxBlocks = 50000
)

// streamBlockSize is the block size of a streamed write; an object of more than Azure's 50,000
// blocks of it gets larger blocks (blockSize). A variable so that a test reaches the staged
// upload with small objects.
var streamBlockSize int64 = 8 << 20

var (
	_ objectstore.StreamWriter      = (*store)(nil)
	_ objectstore.ConditionalWriter = (*store)(nil)
)

// blockSize is the block size for an object of size bytes, at least min.
func blockSize(size, least int64) int64 {
	return max(least, (size+maxBlocks-1)/maxBlocks)
}

// PutObjectStream implements objectstore.StreamWriter: one Put Blob up to the block size, else
// the azblob SDK's UploadStream (Put Block of blocks read one by one into at most
// streamBlocksInFlight buffers, then one Put Block List). The stream is read through
// objectstore.ExactStream: a stream shorter or longer than size, or one that fails, fails before
// the block list is committed, so no blob is written. Azure has no call that discards a blob's
// uncommitted blocks: it discards them itself at the blob's next commit or after a week.
func (s *store) PutObjectStream(ctx context.Context, bucket, key string, r io.Reader, size int64) error {
	return s.putObjectStream(ctx, bucket, key, r, size, nil)
}

// PutObjectStreamIf implements objectstore.ConditionalWriter with Azure's conditional headers on
// the request that stores the blob (Put Blob, or Put Block List after the blocks): If-None-Match: *
// where the key must be missing, If-Match with the listed ETag where it replaces that blob. Azure
// answers 412 ConditionNotMet (409 BlobAlreadyExists for If-None-Match, 404 for If-Match on a
// missing blob): each is ErrPreconditionFailed, and no blob is written (staged blocks are
// discarded by Azure as for PutObjectStream).
func (s *store) PutObjectStreamIf(ctx context.Context, bucket, key string, r io.Reader, size int64, cond objectstore.Precondition) error {
	return s.putObjectStream(ctx, bucket, key, r, size, &cond)
}

// putObjectStream is PutObjectStream, conditioned on cond where it is not nil.
func (s *store) putObjectStream(ctx context.Context, bucket, key string, r io.Reader, size int64, cond *objectstore.Precondition) error {
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	if size < 0 {
		return objectstore.Invalidf("object %s: negative size %d", key, size)
	}
	block := blockSize(size, streamBlockSize)
	exact := objectstore.ExactStream(r, key, size)
	if size <= block {
		data, err := readExact(exact, size)
		if err != nil {
			return err
		}
		if cond == nil {
			return s.PutObject(ctx, bucket, key, data)
		}
		c, err := s.container(ctx, bucket)
		if err != nil {
			return err
		}
		_, err = c.NewBlockBlobClient(key).UploadBuffer(ctx, data, &blockblob.UploadBufferOptions{AccessConditions: accessConditions(cond)})
		return s.conditionalError(bucket, key, cond, err)
	}
	c, err := s.container(ctx, bucket)
	if err != nil {
		return err
	}
	_, err = c.NewBlockBlobClient(key).UploadStream(ctx, exact, &blockblob.UploadStreamOptions{BlockSize: block, Concurrency: streamBlocksInFlight, AccessConditions: accessConditions(cond)})
	return s.conditionalError(bucket, key, cond, err)
}

// readExact reads exact (objectstore.ExactStream of size bytes) whole into one buffer of size
// bytes, and its end: a stream shorter or longer than size fails.
func readExact(exact io.Reader, size int64) ([]byte, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(exact, data); err != nil {
		return nil, err
	}
	var one [1]byte
	switch _, err := io.ReadFull(exact, one[:]); {
	case errors.Is(err, io.EOF):
		return data, nil
	case err == nil:
		return nil, fmt.Errorf("the stream holds more than %d bytes", size)
	default:
		return nil, err
	}
}

// accessConditions are Azure's If-None-Match and If-Match for cond (none for nil).
func accessConditions(cond *objectstore.Precondition) *blob.AccessConditions {
	switch {
	case cond == nil:
		return nil
	case cond.Replaces == nil:
		return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: new(azcore.ETagAny)}}
	default:
		return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: quotedETag(cond.Replaces.ETag)}}
	}
}

// conditionalError classifies the error of a request that stores a blob under cond: a condition
// Azure refused is ErrPreconditionFailed; anything else as classify.
func (s *store) conditionalError(bucket, key string, cond *objectstore.Precondition, err error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if cond != nil && errors.As(err, &re) {
		if re.StatusCode == http.StatusPreconditionFailed || bloberror.HasCode(err, bloberror.BlobAlreadyExists) ||
			(cond.Replaces != nil && re.StatusCode == http.StatusNotFound && bloberror.HasCode(err, bloberror.BlobNotFound)) {
			return fmt.Errorf("writing %q to container %q: %s: %w", key, bucket, re.ErrorCode, objectstore.ErrPreconditionFailed)
		}
	}
	return fmt.Errorf("writing %q to container %q: %w", key, bucket, s.classify(err))
}
