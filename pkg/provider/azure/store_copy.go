// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// copyBlockSize is the range one Put Block From URL copies (Azure allows up to 4000 MiB); a
// blob of more than 50,000 of them gets larger ones. A variable so that a test reaches several
// blocks with small objects.
var copyBlockSize int64 = 256 << 20

// copySASLifetime bounds the read-only SAS of the source blob that the copy hands to Azure.
const copySASLifetime = time.Hour

var (
	_ objectstore.ServerSideCopier  = (*store)(nil)
	_ objectstore.ConditionalCopier = (*store)(nil)
)

// CopyObject implements objectstore.ServerSideCopier: the destination blob's blocks are staged
// with Put Block From URL, range by range (Azure reads the source; the bytes never pass through
// this process), then committed with one Put Block List, so the destination is replaced whole or
// not at all. Every range is conditioned on the source's listed ETag (x-ms-source-if-match; a
// listing without one: on its listed write time), so a source written again after its listing,
// even within the same second, fails the copy. The source is read with a read-only SAS of that
// one blob, signed with its account's key: that works across the accounts of one store (an ARM
// store's buckets each have their own). An empty source stages nothing: one Get Blob Properties
// under the same condition checks it. A failed copy leaves uncommitted blocks that Azure
// discards at the blob's next commit or after a week (no call discards them).
func (s *store) CopyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string) error {
	return s.copyObject(ctx, srcBucket, src, dstBucket, dstKey, nil)
}

// CopyObjectIf implements objectstore.ConditionalCopier: CopyObject with the destination's
// condition (If-None-Match: *, or If-Match with the listed ETag) on the Put Block List that
// commits the copy, as PutObjectStreamIf.
func (s *store) CopyObjectIf(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string, cond objectstore.Precondition) error {
	return s.copyObject(ctx, srcBucket, src, dstBucket, dstKey, &cond)
}

// copyObject is CopyObject, the destination conditioned on cond where it is not nil.
func (s *store) copyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string, cond *objectstore.Precondition) error {
	for _, b := range []string{srcBucket, dstBucket} {
		if err := azureapi.ValidateBucketName(b); err != nil {
			return err
		}
	}
	if src.Noncurrent {
		return objectstore.Invalidf("copying %s/%s: only a current version is copied, not %s", srcBucket, src.Key, src.Version)
	}
	from, err := s.container(ctx, srcBucket)
	if err != nil {
		return err
	}
	to, err := s.container(ctx, dstBucket)
	if err != nil {
		return err
	}
	source := from.NewBlobClient(src.Key)
	srcCond := &blob.SourceModifiedAccessConditions{}
	if src.ETag != "" {
		srcCond.SourceIfMatch = quotedETag(src.ETag)
	} else {
		// Last-Modified has whole seconds; the listing may not: the next whole second is after it.
		srcCond.SourceIfUnmodifiedSince = new(src.Modified.Truncate(time.Second).Add(time.Second))
	}
	if src.Size == 0 {
		_, err := source.GetProperties(ctx, &blob.GetPropertiesOptions{AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{
			IfMatch: srcCond.SourceIfMatch, IfUnmodifiedSince: srcCond.SourceIfUnmodifiedSince,
		}}})
		if err != nil {
			return s.copyError(ctx, source, srcBucket, src.Key, dstBucket, err)
		}
	}
	sourceURL, err := source.GetSASURL(sas.BlobPermissions{Read: true}, time.Now().Add(copySASLifetime), nil)
	if err != nil {
		return fmt.Errorf("copying %s/%s: signing a read-only SAS of the source: %w", srcBucket, src.Key, err)
	}
	dst := to.NewBlockBlobClient(dstKey)
	run, err := blockRun()
	if err != nil {
		return err
	}
	block := blockSize(src.Size, copyBlockSize)
	var ids []string
	for n, offset := 0, int64(0); offset < src.Size; n, offset = n+1, offset+block {
		id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s-%06d", run, n))
		_, err := dst.StageBlockFromURL(ctx, id, sourceURL, &blockblob.StageBlockFromURLOptions{
			Range:                          blob.HTTPRange{Offset: offset, Count: min(block, src.Size-offset)},
			SourceModifiedAccessConditions: srcCond,
		})
		if err != nil {
			return s.copyError(ctx, source, srcBucket, src.Key, dstBucket, err)
		}
		ids = append(ids, id)
	}
	if _, err := dst.CommitBlockList(ctx, ids, &blockblob.CommitBlockListOptions{AccessConditions: accessConditions(cond)}); err != nil {
		return fmt.Errorf("copying %s/%s: committing %d blocks: %w", srcBucket, src.Key, len(ids), s.conditionalError(dstBucket, dstKey, cond, err))
	}
	return nil
}

// blockRun names the blocks of one copy: two copies to the same blob at once never commit each
// other's blocks.
func blockRun() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// quotedETag is an ETag as a conditional header carries it (a listing gives it bare).
func quotedETag(etag string) *azcore.ETag {
	if !strings.HasPrefix(etag, `"`) {
		etag = `"` + etag + `"`
	}
	e := azcore.ETag(etag)
	return &e
}

// copyError classifies a copy's error, naming both containers. Azure answers a failed source
// condition with 412, a source that is gone with 404 (CannotVerifyCopySource or BlobNotFound);
// an If-Match on a gone blob may be answered 412 too (Azurite does, as HTTP has it), so a 412 is
// told apart with one Get Blob Properties of the source.
func (s *store) copyError(ctx context.Context, source *blob.Client, srcBucket, srcKey, dstBucket string, err error) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		gone := re.StatusCode == http.StatusNotFound && bloberror.HasCode(err, bloberror.CannotVerifyCopySource)
		if re.StatusCode == http.StatusPreconditionFailed {
			_, perr := source.GetProperties(ctx, nil)
			if !errors.Is(s.classify(perr), objectstore.ErrNotFound) {
				return fmt.Errorf("copying %s/%s to container %s: the source was written again since it was listed: %w", srcBucket, srcKey, dstBucket, s.classify(err))
			}
			gone = true
		}
		if gone {
			return fmt.Errorf("copying %s/%s to container %s: %w: the source is gone (%w)", srcBucket, srcKey, dstBucket, objectstore.ErrNotFound, s.classify(err))
		}
	}
	return fmt.Errorf("copying %s/%s to container %s: %w", srcBucket, srcKey, dstBucket, s.classify(err))
}
