// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// streamWriter is the StreamWriter of a store built from data.
func streamWriter(t *testing.T, data map[string][]byte) objectstore.StreamWriter {
	t.Helper()
	w, ok := newStore(t, data).Writer.(objectstore.StreamWriter)
	if !ok {
		t.Fatal("the aws Writer has no PutObjectStream")
	}
	return w
}

// TestPutObjectStream writes streams of 0 bytes, a few bytes and more than two parts (16 MiB
// each), reads them back whole, and refuses a stream shorter or longer than its size, leaving
// neither an object nor an unfinished multipart upload behind.
func TestPutObjectStream(t *testing.T) {
	ctx := context.Background()
	name := newBucketName()
	if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	w, store := streamWriter(t, minio.SecretData()), newStore(t, minio.SecretData())
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 5, 40<<20 + 3} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rnd.Uint32())
		}
		key := fmt.Sprintf("k-%d", size)
		if err := w.PutObjectStream(ctx, name, key, bytes.NewReader(data), int64(size)); err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		r, err := store.OpenObject(ctx, name, key, "")
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		n, err := io.Copy(h, r)
		r.Close()
		if err != nil || n != int64(size) || !bytes.Equal(h.Sum(nil), sha256sum(data)) {
			t.Errorf("%d bytes: read back %d bytes (%v), same content %t", size, n, err, bytes.Equal(h.Sum(nil), sha256sum(data)))
		}
	}
	for _, c := range []struct {
		name string
		size int64
		r    io.Reader
	}{
		{"short, one part", 10, strings.NewReader("12345")},
		{"long, one part", 3, strings.NewReader("12345")},
		{"short, multipart", 40 << 20, io.LimitReader(zeros{}, 20<<20)},
		{"long, multipart", 20 << 20, io.LimitReader(zeros{}, 40<<20)},
		{"failing, multipart", 40 << 20, io.MultiReader(io.LimitReader(zeros{}, 20<<20), failing{})},
	} {
		if err := w.PutObjectStream(ctx, name, "bad", c.r, c.size); err == nil {
			t.Errorf("%s: written", c.name)
		}
	}
	if _, err := store.OpenObject(ctx, name, "bad", ""); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a refused stream left an object: %v", err)
	}
	uploads, err := minio.S3Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &name})
	if err != nil || len(uploads.Uploads) != 0 {
		t.Errorf("unfinished multipart uploads left: %d (%v)", len(uploads.Uploads), err)
	}
}

func sha256sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestReplicationBetweenTwoBuckets copies an entry from one MinIO bucket to another through the
// aws data planes and the streaming put, then once more (nothing to do).
func TestReplicationBetweenTwoBuckets(t *testing.T) {
	ctx := context.Background()
	from, to := newBucketName(), newBucketName()
	for _, b := range []string{from, to} {
		if err := ensure(t, minio.SecretData(), b, minioConfig()); err != nil {
			t.Fatal(err)
		}
	}
	src := newStore(t, minio.SecretData())
	for i := range 30 {
		key := fmt.Sprintf("shoot--a--b--1/etcd-main/v2/Incr-%08d-%08d-%d.gz", 10*i+1, 10*i+10, 1764392400+i)
		if err := src.PutObject(ctx, from, key, bytes.Repeat([]byte{byte(i)}, i)); err != nil {
			t.Fatal(err)
		}
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	dst := struct {
		objectstore.DataPlane
		objectstore.StreamWriter
	}{newStore(t, minio.SecretData()), streamWriter(t, minio.SecretData())}
	for pass, want := range []int{30, 0} {
		res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: from}, replication.To{Store: dst, Bucket: to}, prefix, replication.Options{})
		if err != nil || res.Copied != want || res.Plan.InSync != 30-want || !res.Done() || res.Lag != 0 {
			t.Fatalf("pass %d: %+v, %v; want %d copied", pass, res, err, want)
		}
	}
	got, err := objectstore.ReadObject(ctx, dst, to, "shoot--a--b--1/etcd-main/v2/Incr-00000291-00000300-1764392429.gz")
	if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{29}, 29)) {
		t.Errorf("copied content %v, %v", got, err)
	}
}
