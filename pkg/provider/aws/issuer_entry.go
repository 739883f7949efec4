// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// entryPolicy allows what etcd-backup-restore does for one shoot (snapshots, multipart uploads,
// listing with versions, garbage collection, restoration) under prefix of bucket only; read-only
// access (a source- entry) only reads and lists. The trailing slash of prefix is in every
// resource and condition: entry "uid1" does not reach "uid10/". A listing is allowed only with
// an s3:prefix under the entry's (an empty prefix, a sibling's, none: refused).
// etcd-backup-restore v0.43.0 and v0.44.1 ran with it on MinIO (test/integration/entrycredentials).
func entryPolicy(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) ([]byte, error) {
	if err := prefix.Validate(); err != nil || prefix.IsWholeBucket() {
		return nil, fmt.Errorf("%w: an entry's policy needs an entry's prefix, not %q", objectstore.ErrInvalidConfig, prefix.String())
	}
	p := prefix.String()
	// Each action is one AWS authorizes a call of etcd-backup-restore with (docs/entry-credentials.md
	// lists them): GetObjectTagging of a version needs s3:GetObjectVersionTagging too, and without it
	// etcd-backup-restore takes a snapshot the operator excluded for one to restore.
	objectActions := []string{"s3:GetObject", "s3:GetObjectVersion", "s3:GetObjectTagging", "s3:GetObjectVersionTagging"}
	if access != objectstore.EntryReadOnly {
		objectActions = append(objectActions, "s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:AbortMultipartUpload")
	}
	return json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []map[string]any{
			{"Effect": "Allow", "Resource": []string{"arn:aws:s3:::" + bucket},
				"Action":    []string{"s3:ListBucket", "s3:ListBucketVersions"},
				"Condition": map[string]any{"StringLike": map[string]any{"s3:prefix": []string{p, p + "*"}}}},
			{"Effect": "Allow", "Resource": []string{"arn:aws:s3:::" + bucket},
				"Action": []string{"s3:GetBucketVersioning", "s3:GetBucketObjectLockConfiguration"}},
			{"Effect": "Allow", "Resource": []string{"arn:aws:s3:::" + bucket + "/" + p + "*"}, "Action": objectActions},
		},
	})
}

// entryCredentialReach is what entryPolicy grants.
func entryCredentialReach(kind, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	what := "reading, writing and deleting"
	if access == objectstore.EntryReadOnly {
		what = "reading"
	}
	return fmt.Sprintf("%s whose policy allows %s the objects under %q of bucket %q, listing only under that prefix, and reading the bucket's versioning and object lock settings; S3 checks it on every request, server-side copies included, so it reaches no other entry's objects", kind, what, prefix.String(), bucket)
}

// entryCredentialID implements EntryCredentialIssuer.CredentialID for both issuers: the access
// key ID.
func entryCredentialID(data map[string][]byte) string { return string(data[KeyAccessKeyID]) }

// proofTimeout bounds how long a new credential may take to work (AWS IAM is eventually
// consistent: a new key usually works within seconds).
const proofTimeout = 60 * time.Second

// proveEntryCredential lists prefix and reads the bucket's versioning with data, retrying while
// the store does not know the new credential yet: a credential is published only once it works.
func (p *Provider) proveEntryCredential(ctx context.Context, data map[string][]byte, region, bucket string, prefix objectstore.Prefix) error {
	client, err := p.NewS3Client(provider.Credentials{Data: data, Region: region})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, proofTimeout)
	defer cancel()
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		_, err = client.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(prefix.String()), MaxKeys: aws.Int32(1)})
		if err == nil {
			_, err = client.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(bucket)})
		}
		if err == nil {
			return nil
		}
		err = classify(err)
		if !errors.Is(err, objectstore.ErrUnauthenticated) && !errors.Is(err, objectstore.ErrForbidden) {
			return fmt.Errorf("proving the new credential of %q in bucket %q usable: %w", prefix.String(), bucket, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the new credential of %q in bucket %q was not usable within %s (listing its prefix, reading the bucket's versioning): %w", prefix.String(), bucket, proofTimeout, err)
		case <-time.After(wait):
		}
	}
}
