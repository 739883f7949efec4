// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

// TestResumableStreamAndVersionedCopy streams an object of several chunks (the chunk lowered to
// 256 KiB, GCS's smallest) as a resumable upload and reads it back; a short stream of several
// chunks writes nothing. In a versioned bucket, where the listed generation outlives a rewrite,
// a copy of a source written again since its listing is refused by ifSourceGenerationMatch
// (the front plays it: fake-gcs-server ignores it) and is no ErrNotFound.
func TestResumableStreamAndVersionedCopy(t *testing.T) {
	defer gcpprovider.SetStreamChunkSize(256 << 10)()
	ctx := ctxFor(t)
	data := gcs.SecretData()
	store := newStore(t, data)
	from, to := newBucketName(), newBucketName()
	for _, b := range []string{from, to} {
		if err := ensure(t, store, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rawClient(t, data).Bucket(from).Update(ctx, storage.BucketAttrsToUpdate{VersioningEnabled: true}); err != nil {
		t.Fatal(err)
	}
	w := store.Writer.(objectstore.StreamWriter)
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<14+1) // 768 KiB and 16 bytes: four chunks
	if err := w.PutObjectStream(ctx, from, "big", bytes.NewReader(big), int64(len(big))); err != nil {
		t.Fatalf("PutObjectStream: %v", err)
	}
	if got, err := objectstore.ReadObject(ctx, store, from, "big"); err != nil || !bytes.Equal(got, big) {
		t.Errorf("read back %d bytes (%v), same %t", len(got), err, bytes.Equal(got, big))
	}
	short := io.LimitReader(bytes.NewReader(big), int64(len(big))-1)
	if err := w.PutObjectStream(ctx, from, "short", short, int64(len(big))); err == nil {
		t.Error("a short stream of four chunks was written")
	}
	if _, err := store.OpenObject(ctx, from, "short", ""); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a refused stream left an object: %v", err)
	}

	var listed objectstore.ObjectVersion
	if err := store.ListObjects(ctx, from, "big", func(p []objectstore.ObjectVersion) error { listed = p[0]; return nil }); err != nil {
		t.Fatal(err)
	}
	c := store.DataPlane.(objectstore.ServerSideCopier)
	if err := c.CopyObject(ctx, from, listed, to, "copied"); err != nil {
		t.Fatalf("CopyObject: %v", err)
	}
	if err := store.PutObject(ctx, from, "big", []byte("rewritten")); err != nil {
		t.Fatal(err)
	}
	err := c.CopyObject(ctx, from, listed, to, "stale")
	if err == nil || errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a source written again since its listing: %v; want a refusal that is no ErrNotFound", err)
	}
	if _, err := store.OpenObject(ctx, to, "stale", ""); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a refused copy left an object: %v", err)
	}
}
