// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
)

// TestConditionalWrites on MinIO: If-None-Match: * writes only a missing key, If-Match only over
// the listed version (its ETag), for a single PutObject and a multipart upload (refused at
// CompleteMultipartUpload, the upload aborted); a refusal is ErrPreconditionFailed and the
// object found is kept. A server-side copy too, of one part (MinIO ignores the conditions on
// CopyObject, so the store copies in parts on an S3-compatible endpoint) and of several.
func TestConditionalWrites(t *testing.T) {
	ctx := context.Background()
	name := newBucketName()
	if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	store := newStore(t, minio.SecretData())
	w, ok := store.Writer.(objectstore.ConditionalWriter)
	if !ok {
		t.Fatal("the aws Writer has no PutObjectStreamIf")
	}
	listed := func(key string) objectstore.ObjectVersion {
		t.Helper()
		var o objectstore.ObjectVersion
		if err := store.ListObjects(ctx, name, key, func(page []objectstore.ObjectVersion) error { o = page[0]; return nil }); err != nil {
			t.Fatal(err)
		}
		if o.ETag == "" {
			t.Fatalf("%s listed without an ETag", key)
		}
		return o
	}
	read := func(key string) string {
		t.Helper()
		got, err := objectstore.ReadObject(ctx, store, name, key)
		if err != nil {
			t.Fatal(err)
		}
		return string(got[:min(len(got), 8)])
	}
	for _, size := range []int{8, 20<<20 + 8} { // one PutObject; a multipart upload
		key := fmt.Sprintf("k-%d", size)
		content := func(s string) []byte { return append([]byte(s), make([]byte, size-len(s))...) }
		put := func(data []byte, cond objectstore.Precondition) error {
			return w.PutObjectStreamIf(ctx, name, key, bytes.NewReader(data), int64(len(data)), cond)
		}
		if err := put(content("first.."), objectstore.Precondition{}); err != nil {
			t.Fatalf("%d bytes, missing key, If-None-Match: %v", size, err)
		}
		first := listed(key)
		if err := put(content("again.."), objectstore.Precondition{}); !errors.Is(err, objectstore.ErrPreconditionFailed) {
			t.Errorf("%d bytes, existing key, If-None-Match: %v; want ErrPreconditionFailed", size, err)
		}
		if err := put(content("second."), objectstore.Precondition{Replaces: &first}); err != nil {
			t.Fatalf("%d bytes, If-Match the listed ETag: %v", size, err)
		}
		if err := put(content("stale.."), objectstore.Precondition{Replaces: &first}); !errors.Is(err, objectstore.ErrPreconditionFailed) {
			t.Errorf("%d bytes, If-Match a replaced ETag: %v; want ErrPreconditionFailed", size, err)
		}
		if got := read(key); got != "second.\x00" {
			t.Errorf("%d bytes: %q kept; want the second write", size, got)
		}
		gone := first
		gone.Key = key + "-never-written"
		if err := w.PutObjectStreamIf(ctx, name, gone.Key, bytes.NewReader(content("x")), int64(size), objectstore.Precondition{Replaces: &gone}); !errors.Is(err, objectstore.ErrPreconditionFailed) {
			t.Errorf("%d bytes, If-Match on a missing key: %v; want ErrPreconditionFailed", size, err)
		}
	}
	uploads, err := minio.S3Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &name})
	if err != nil || len(uploads.Uploads) != 0 {
		t.Errorf("refused multipart uploads left: %d (%v)", len(uploads.Uploads), err)
	}

	copier, ok := store.DataPlane.(objectstore.ConditionalCopier)
	if !ok {
		t.Fatal("the aws data plane has no CopyObjectIf")
	}
	src := listed("k-8")
	if err := copier.CopyObjectIf(ctx, name, src, name, "copy", objectstore.Precondition{}); err != nil {
		t.Fatalf("copy to a missing key: %v", err)
	}
	if err := copier.CopyObjectIf(ctx, name, src, name, "copy", objectstore.Precondition{}); !errors.Is(err, objectstore.ErrPreconditionFailed) {
		t.Errorf("copy over an existing key with If-None-Match: %v; want ErrPreconditionFailed", err)
	}
	replaced := listed("copy")
	if err := copier.CopyObjectIf(ctx, name, src, name, "copy", objectstore.Precondition{Replaces: &replaced}); err != nil {
		t.Errorf("copy with If-Match the listed ETag: %v", err)
	}
	if err := store.PutObject(ctx, name, "copy", []byte("someone else's")); err != nil {
		t.Fatal(err)
	}
	if err := copier.CopyObjectIf(ctx, name, src, name, "copy", objectstore.Precondition{Replaces: &replaced}); !errors.Is(err, objectstore.ErrPreconditionFailed) {
		t.Errorf("copy with If-Match a replaced ETag: %v; want ErrPreconditionFailed", err)
	}
	defer awsprovider.SetCopyLimits(1, 5<<20)()
	big := listed("k-20971528")
	if err := copier.CopyObjectIf(ctx, name, big, name, "copy-parts", objectstore.Precondition{}); err != nil {
		t.Fatalf("multipart copy to a missing key: %v", err)
	}
	if err := copier.CopyObjectIf(ctx, name, big, name, "copy-parts", objectstore.Precondition{}); !errors.Is(err, objectstore.ErrPreconditionFailed) {
		t.Errorf("multipart copy over an existing key with If-None-Match: %v; want ErrPreconditionFailed", err)
	}
}
