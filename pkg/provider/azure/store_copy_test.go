// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
)

// TestStagedStreamAndCopy streams and copies objects of several blocks on Azurite (the block
// sizes lowered to 1 MiB): the staged upload (Put Block, Put Block List) and the ranged Put Block
// From URL, both read back byte for byte; a short stream and a copy of a source written since
// its listing write nothing.
func TestStagedStreamAndCopy(t *testing.T) {
	defer azureprovider.SetBlockSizes(1<<20, 1<<20)()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store := newStore(t, azurite.SecretData())
	w := store.Writer.(objectstore.StreamWriter)
	c := store.DataPlane.(objectstore.ServerSideCopier)
	from, to := newBucketName(), newBucketName()
	for _, b := range []string{from, to} {
		if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: b, Region: "westeurope"}); err != nil {
			t.Fatal(err)
		}
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 3<<16+1) // 3 MiB and 16 bytes: four blocks
	if err := w.PutObjectStream(ctx, from, "big", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("PutObjectStream: %v", err)
	}
	if got, err := objectstore.ReadObject(ctx, store, from, "big"); err != nil || !bytes.Equal(got, data) {
		t.Errorf("streamed: read back %d bytes (%v), same %t", len(got), err, bytes.Equal(got, data))
	}
	short := io.LimitReader(bytes.NewReader(data), int64(len(data))-1)
	if err := w.PutObjectStream(ctx, from, "short", short, int64(len(data))); err == nil {
		t.Error("a short stream of four blocks was written")
	}
	var listed objectstore.ObjectVersion
	if err := store.ListObjects(ctx, from, "big", func(p []objectstore.ObjectVersion) error { listed = p[0]; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyObject(ctx, from, listed, to, "copied"); err != nil {
		t.Fatalf("CopyObject: %v", err)
	}
	if got, err := objectstore.ReadObject(ctx, store, to, "copied"); err != nil || !bytes.Equal(got, data) {
		t.Errorf("copied: read back %d bytes (%v), same %t", len(got), err, bytes.Equal(got, data))
	}
	if err := store.PutObject(ctx, from, "big", data[:len(data)-1]); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyObject(ctx, from, listed, to, "stale"); err == nil {
		t.Error("a source written again since its listing was copied")
	}
	for _, k := range []string{"short", "stale"} {
		bucket := map[string]string{"short": from, "stale": to}[k]
		if _, err := store.OpenObject(ctx, bucket, k, ""); !errors.Is(err, objectstore.ErrNotFound) {
			t.Errorf("%s: a refused write left a blob: %v", k, err)
		}
	}
}
