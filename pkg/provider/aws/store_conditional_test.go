// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
)

// TestConditionalWritesLeaveNoUpload on MinIO, beyond the conformance case ConditionalWrite: a
// multipart upload refused at CompleteMultipartUpload is aborted (no upload left, which S3
// bills), and a server-side copy in several parts (UploadPartCopy) is conditioned too.
func TestConditionalWritesLeaveNoUpload(t *testing.T) {
	ctx := context.Background()
	name := newBucketName()
	if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	store := newStore(t, minio.SecretData())
	w := store.Writer.(objectstore.ConditionalWriter)
	big := make([]byte, 20<<20+8) // a multipart upload
	put := func() error {
		return w.PutObjectStreamIf(ctx, name, "big", bytes.NewReader(big), int64(len(big)), objectstore.Precondition{})
	}
	if err := put(); err != nil {
		t.Fatal(err)
	}
	if err := put(); !errors.Is(err, objectstore.ErrPreconditionFailed) {
		t.Errorf("a multipart upload over an existing key with If-None-Match: %v; want ErrPreconditionFailed", err)
	}
	uploads, err := minio.S3Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &name})
	if err != nil || len(uploads.Uploads) != 0 {
		t.Errorf("refused multipart uploads left: %d (%v)", len(uploads.Uploads), err)
	}

	var src objectstore.ObjectVersion
	if err := store.ListObjects(ctx, name, "big", func(page []objectstore.ObjectVersion) error { src = page[0]; return nil }); err != nil {
		t.Fatal(err)
	}
	copier := store.DataPlane.(objectstore.ConditionalCopier)
	defer awsprovider.SetCopyLimits(1, 5<<20)()
	if err := copier.CopyObjectIf(ctx, name, src, name, "copy-parts", objectstore.Precondition{}); err != nil {
		t.Fatalf("multipart copy to a missing key: %v", err)
	}
	if err := copier.CopyObjectIf(ctx, name, src, name, "copy-parts", objectstore.Precondition{}); !errors.Is(err, objectstore.ErrPreconditionFailed) {
		t.Errorf("multipart copy over an existing key with If-None-Match: %v; want ErrPreconditionFailed", err)
	}
	uploads, err = minio.S3Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &name})
	if err != nil || len(uploads.Uploads) != 0 {
		t.Errorf("refused multipart copies left: %d uploads (%v)", len(uploads.Uploads), err)
	}
}
