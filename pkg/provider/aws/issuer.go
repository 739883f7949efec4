// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"encoding/json"
	"fmt"
)

// credentialTemplate is what a generated credential keeps of the operator's secret: where and how
// to reach and use the store (storeKeys), none of the operator's own credentials (keys, workload
// identity token).
func credentialTemplate(d map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for _, k := range storeKeys {
		if v, ok := d[k]; ok {
			out[k] = v
		}
	}
	return out
}

// bucketPolicy allows what etcd-backup-restore does (snapshots, multipart uploads, listing with
// versions, deleting its garbage) and the entry controller's deletion and deferral (tagging the
// versions it defers, reading the bucket's lifecycle rules back), in bucket only.
func bucketPolicy(bucket string) ([]byte, error) {
	return json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []map[string]any{
			{"Effect": "Allow", "Resource": []string{"arn:aws:s3:::" + bucket}, "Action": []string{
				"s3:ListBucket", "s3:ListBucketVersions", "s3:ListBucketMultipartUploads", "s3:GetBucketLocation",
				"s3:GetBucketVersioning", "s3:GetBucketObjectLockConfiguration",
				// Deferred deletion (DeferDeletion): reading the bucket's rules back.
				"s3:GetLifecycleConfiguration"}},
			{"Effect": "Allow", "Resource": []string{"arn:aws:s3:::" + bucket + "/*"}, "Action": []string{
				"s3:GetObject", "s3:GetObjectVersion", "s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion",
				"s3:GetObjectTagging", "s3:PutObjectTagging", "s3:GetObjectRetention", "s3:GetObjectLegalHold",
				// Deferred deletion (tagForDeferral): tagging each locked version it defers.
				"s3:GetObjectVersionTagging", "s3:PutObjectVersionTagging",
				"s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"}},
		},
	})
}

// credentialReach is what the bucket policy above grants: the bucket's objects and a few reads
// of its settings, nothing of another bucket or of IAM.
func credentialReach(kind, bucket string) string {
	return fmt.Sprintf("%s whose policy allows reading, writing, tagging and deleting the objects of bucket %q and reading its settings; S3 checks it on every request, server-side copies included, so it reaches no other bucket and no other service", kind, bucket)
}

// HeldIn implements objectstore.CredentialIssuer: the operator's secret never holds a key of a
// user this issuer created.
func (s *iamIssuer) HeldIn(context.Context, string, map[string][]byte) ([]string, error) {
	return nil, nil
}

// CredentialReach implements objectstore.CredentialIssuer.
func (s *iamIssuer) CredentialReach(bucket string) string {
	return credentialReach("an access key of IAM user "+IAMUserName(bucket), bucket)
}

// HeldIn implements objectstore.CredentialIssuer: the operator's secret never holds a key of a
// user this issuer created.
func (m *minioIssuer) HeldIn(context.Context, string, map[string][]byte) ([]string, error) {
	return nil, nil
}

// CredentialReach implements objectstore.CredentialIssuer.
func (m *minioIssuer) CredentialReach(bucket string) string {
	return credentialReach("a MinIO user", bucket)
}
