// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

var _ objectstore.ServerSideCopier = (*store)(nil)

// CopyObject implements objectstore.ServerSideCopier with the SDK's Copier (objects.rewrite,
// repeated with its rewrite token until GCS reports it done: one call within a location and
// storage class, several across them). The source is the listed generation (sourceGeneration),
// conditioned on its being the live one still (ifSourceGenerationMatch): a source written again
// after its listing fails with 412, or with 404 (ErrNotFound) where its listed generation is gone,
// rather than copy another generation; a source deleted since fails with 404. The destination object appears only when the rewrite is done: a failed
// copy leaves none.
func (s *store) CopyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string) error {
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
	_, err = s.client.Bucket(dstBucket).Object(dstKey).CopierFrom(source).Run(ctx)
	if err == nil {
		return nil
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) && gerr.Code == http.StatusPreconditionFailed {
		return fmt.Errorf("copying %s/%s to bucket %s: the source was written again since it was listed: %w", srcBucket, src.Key, dstBucket, classify(err))
	}
	return fmt.Errorf("copying %s/%s to bucket %s: %w", srcBucket, src.Key, dstBucket, classify(err))
}
