// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"fmt"
	"io"

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

var _ objectstore.StreamWriter = (*store)(nil)

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
	if err := azureapi.ValidateBucketName(bucket); err != nil {
		return err
	}
	if size < 0 {
		return objectstore.Invalidf("object %s: negative size %d", key, size)
	}
	block := blockSize(size, streamBlockSize)
	exact := objectstore.ExactStream(r, key, size)
	if size <= block {
		data, err := io.ReadAll(exact)
		if err != nil {
			return err
		}
		return s.PutObject(ctx, bucket, key, data)
	}
	c, err := s.container(ctx, bucket)
	if err != nil {
		return err
	}
	_, err = c.NewBlockBlobClient(key).UploadStream(ctx, exact, &blockblob.UploadStreamOptions{BlockSize: block, Concurrency: streamBlocksInFlight})
	if err != nil {
		return fmt.Errorf("writing %q to container %q: %w", key, bucket, s.classify(err))
	}
	return nil
}
