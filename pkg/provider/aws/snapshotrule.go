// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// SnapshotRule implements objectstore.DataPlane with etcd-backup-restore v0.44.1's S3 snapstore
// (the same in v0.43.0). List (pkg/snapstore/s3_snapstore.go:590-742) first asks
// GetBucketVersioning (597-604): only with the status Enabled (606) does it list versions, keep
// the oldest version of each key (by LastModified, 653-673), collect the keys that have a delete
// marker (677-682), and leave out such a key when that oldest version is tagged
// x-etcd-snapshot-exclude=true (686-692, IsSnapshotMarkedToBeIgnored 877-894); Fetch then reads
// that version by its ID (394-397). Any other status (never enabled, Suspended) lists the
// current objects with ListObjectsV2 (711-739), no tag looked at, read by name. One
// GetBucketVersioning per rule, and one GetObjectTagging per key that has a delete marker.
func (s *store) SnapshotRule(ctx context.Context, bucket string) (objectstore.SnapshotRule, error) {
	if err := awsapi.ValidateBucketName(bucket); err != nil {
		return objectstore.SnapshotRule{}, err
	}
	out, err := s.client.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: &bucket})
	if err != nil {
		return objectstore.SnapshotRule{}, fmt.Errorf("reading the versioning of bucket %q: %w", bucket, s.bucketError(bucket, err))
	}
	if out.Status != types.BucketVersioningStatusEnabled {
		return objectstore.SnapshotRule{Source: "etcd-backup-restore s3_snapstore.go:711-739 (versioning not Enabled)"}, nil
	}
	return objectstore.SnapshotRule{
		Versions:           objectstore.OldestVersion,
		Exclusion:          objectstore.ExcludeMarkedIfDeleted,
		ReadsListedVersion: true,
		MarkOf: func(ctx context.Context, o objectstore.ObjectVersion) (bool, error) {
			return s.excludeMarked(ctx, bucket, o)
		},
		Source: "etcd-backup-restore s3_snapstore.go:590-710, 388-412 (versioning Enabled)",
	}, nil
}

// excludeMarked reads the tags of one version as IsSnapshotMarkedToBeIgnored does. That function
// takes any error for "not marked" (s3_snapstore.go:883-885); so does this one for a refusal (the
// same credentials refuse etcd-backup-restore too) and a version gone since the listing, but a
// throttled or failed request is returned: it proves nothing either way.
func (s *store) excludeMarked(ctx context.Context, bucket string, o objectstore.ObjectVersion) (bool, error) {
	in := &s3.GetObjectTaggingInput{Bucket: &bucket, Key: aws.String(o.Key)}
	if o.Version != "" {
		in.VersionId = aws.String(o.Version)
	}
	out, err := s.client.GetObjectTagging(ctx, in)
	if err != nil {
		if skippable(err) {
			return false, nil
		}
		if err = s.bucketError(bucket, err); errors.Is(err, objectstore.ErrForbidden) || errors.Is(err, objectstore.ErrNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("reading the tags of %q version %q: %w", o.Key, o.Version, err)
	}
	return hasExcludeMark(out.TagSet), nil
}

func hasExcludeMark(tags []types.Tag) bool {
	for _, t := range tags {
		if aws.ToString(t.Key) == objectstore.ExcludeMarkKey && aws.ToString(t.Value) == "true" {
			return true
		}
	}
	return false
}

// MarkExcluded implements the conformance suite's exclude-mark hook (a test Writer's): it tags
// the current version of key as an operator excludes a snapshot.
func (s *store) MarkExcluded(ctx context.Context, bucket, key string) error {
	_, err := s.client.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &bucket, Key: &key, Tagging: &types.Tagging{TagSet: []types.Tag{
		{Key: aws.String(objectstore.ExcludeMarkKey), Value: aws.String("true")},
	}}})
	return s.bucketError(bucket, err)
}
