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
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// TestServerSideCopy copies objects between two buckets of one MinIO with CopyObject and, with
// the limits lowered, with UploadPartCopy; a source written after it was listed, and one that is
// gone, are refused, and no multipart upload is left behind.
func TestServerSideCopy(t *testing.T) {
	ctx := context.Background()
	from, to := newBucketName(), newBucketName()
	for _, b := range []string{from, to} {
		if err := ensure(t, minio.SecretData(), b, minioConfig()); err != nil {
			t.Fatal(err)
		}
	}
	store := newStore(t, minio.SecretData())
	copier, ok := store.DataPlane.(objectstore.ServerSideCopier)
	if !ok {
		t.Fatal("the aws data plane has no CopyObject")
	}
	listed := func(key string) objectstore.ObjectVersion {
		var o objectstore.ObjectVersion
		err := store.ListObjects(ctx, from, key, func(page []objectstore.ObjectVersion) error { o = page[0]; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 12<<16) // 12 MiB
	if err := store.PutObject(ctx, from, "k", data); err != nil {
		t.Fatal(err)
	}
	for _, multipart := range []bool{false, true} {
		if multipart {
			defer awsprovider.SetCopyLimits(1<<20, 5<<20)()
		}
		key := fmt.Sprintf("copy-%t", multipart)
		if err := copier.CopyObject(ctx, from, listed("k"), to, key); err != nil {
			t.Fatalf("multipart %t: %v", multipart, err)
		}
		if got, err := objectstore.ReadObject(ctx, store, to, key); err != nil || !bytes.Equal(got, data) {
			t.Errorf("multipart %t: read back %d bytes (%v), same %t", multipart, len(got), err, bytes.Equal(got, data))
		}
		stale := listed("k")
		stale.Modified = stale.Modified.Add(-time.Hour) // as if listed an hour before it was written
		stale.ETag = ""                                 // by a listing without ETags: the time is the condition
		if err := copier.CopyObject(ctx, from, stale, to, "stale"); err == nil {
			t.Errorf("multipart %t: a source written after its listing was copied", multipart)
		}
		gone := stale
		gone.Key, gone.Modified = "gone", time.Now()
		if err := copier.CopyObject(ctx, from, gone, to, "gone"); !errors.Is(err, objectstore.ErrNotFound) {
			t.Errorf("multipart %t: a missing source: %v; want ErrNotFound", multipart, err)
		}
	}
	if _, err := objectstore.ReadObject(ctx, store, to, "stale"); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a refused copy left an object: %v", err)
	}
	uploads, err := minio.S3Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &to})
	if err != nil || len(uploads.Uploads) != 0 {
		t.Errorf("unfinished multipart uploads left: %d (%v)", len(uploads.Uploads), err)
	}

	// In a versioned bucket the listed version is copied, not the key's newest: a source written
	// again within the second of its listing (which the time condition cannot tell) is not
	// spliced into the copy, in one request or in parts.
	if err := setVersioning(ctx, from, true); err != nil {
		t.Fatal(err)
	}
	first, second := bytes.Repeat([]byte("A"), 6<<20), bytes.Repeat([]byte("B"), 6<<20)
	if err := store.PutObject(ctx, from, "v", first); err != nil {
		t.Fatal(err)
	}
	old := listed("v")
	if err := store.PutObject(ctx, from, "v", second); err != nil {
		t.Fatal(err)
	}
	old.Modified = time.Now().Add(time.Hour) // the time condition cannot tell the two versions apart
	for _, multipart := range []bool{false, true} {
		if multipart {
			defer awsprovider.SetCopyLimits(1<<20, 5<<20)()
		}
		key := fmt.Sprintf("version-%t", multipart)
		if err := copier.CopyObject(ctx, from, old, to, key); err != nil {
			t.Fatalf("multipart %t: %v", multipart, err)
		}
		if got, err := objectstore.ReadObject(ctx, store, to, key); err != nil || !bytes.Equal(got, first) {
			t.Errorf("multipart %t: the copy is not the listed version (%d bytes, %v; first version %t)", multipart, len(got), err, bytes.Equal(got, first))
		}
	}

	// The copy engine with the copier: the same plan, nothing through this process.
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	key := "shoot--a--b--1/etcd-main/v2/Full-00000000-00000010-1764392400.gz"
	if err := store.PutObject(ctx, from, key, data[:100]); err != nil {
		t.Fatal(err)
	}
	dst := replication.To{Store: struct {
		objectstore.DataPlane
		objectstore.StreamWriter
	}{store, streamWriter(t, minio.SecretData())}, Bucket: to, Copier: copier}
	res, err := replication.Copy(ctx, replication.From{Store: store, Bucket: from}, dst, prefix, replication.Options{})
	if err != nil || res.Copied != 1 || !res.Done() {
		t.Fatalf("%+v, %v; want one copied", res, err)
	}
	if got, err := objectstore.ReadObject(ctx, store, to, key); err != nil || !bytes.Equal(got, data[:100]) {
		t.Errorf("read back %d bytes, %v", len(got), err)
	}
}
