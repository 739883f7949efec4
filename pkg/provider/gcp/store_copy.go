// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"fmt"
	"strconv"

	"cloud.google.com/go/storage"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

var (
	_ objectstore.ServerSideCopier  = (*store)(nil)
	_ objectstore.ConditionalCopier = (*store)(nil)
)

// CopyObject implements objectstore.ServerSideCopier with the SDK's Copier (objects.rewrite,
// repeated with its rewrite token until GCS reports it done: one call within a location and
// storage class, several across them). The source is the listed generation (sourceGeneration),
// conditioned on its being the live one still (ifSourceGenerationMatch): a source written again
// after its listing fails with 412, or with 404 (ErrNotFound) where its listed generation is gone,
// rather than copy another generation; a source deleted since fails with 404. The destination object appears only when the rewrite is done: a failed
// copy leaves none.
func (s *store) CopyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string) error {
	return s.copyObject(ctx, srcBucket, src, dstBucket, dstKey, nil)
}

// CopyObjectIf implements objectstore.ConditionalCopier: CopyObject with the destination's
// ifGenerationMatch (0, or the listed generation it replaces) on every rewrite call, as
// PutObjectStreamIf. A 412 does not tell which condition failed, the source's or the
// destination's: either way something changed since the listing and nothing was written, which
// is ErrPreconditionFailed.
func (s *store) CopyObjectIf(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string, cond objectstore.Precondition) error {
	return s.copyObject(ctx, srcBucket, src, dstBucket, dstKey, &cond)
}

// copyObject is CopyObject, the destination conditioned on cond where it is not nil.
func (s *store) copyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string, cond *objectstore.Precondition) error {
	for _, b := range []string{srcBucket, dstBucket} {
		if err := gcpapi.ValidateBucketName(b); err != nil {
			return err
		}
	}
	gen, err := strconv.ParseInt(src.Version, 10, 64)
	if err != nil || src.Noncurrent {
		return objectstore.Invalidf("copying %s/%s: generation %q is no listed live generation", srcBucket, src.Key, src.Version)
	}
	source := s.client.Bucket(srcBucket).Object(src.Key).Generation(gen).If(storage.Conditions{GenerationMatch: gen})
	dst, err := conditioned(s.client.Bucket(dstBucket).Object(dstKey), cond)
	if err != nil {
		return err
	}
	_, err = dst.CopierFrom(source).Run(ctx)
	if err == nil {
		return nil
	}
	if cond != nil && preconditionFailed(err) {
		return fmt.Errorf("copying %s/%s to bucket %s: the source or the destination changed since they were listed: %w", srcBucket, src.Key, dstBucket, objectstore.ErrPreconditionFailed)
	}
	if preconditionFailed(err) {
		return fmt.Errorf("copying %s/%s to bucket %s: the source was written again since it was listed: %w", srcBucket, src.Key, dstBucket, classify(err))
	}
	return fmt.Errorf("copying %s/%s to bucket %s: %w", srcBucket, src.Key, dstBucket, classify(err))
}
