// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

// TestARefusedStreamInOneRequestIsNotStored: a stream up to the chunk (one upload request whose
// body is the stream, under way when the stream fails) that fails, or fails only when read past
// its size (a copy's refused commit), leaves no object, every time. fake-gcs-server.
func TestARefusedStreamInOneRequestIsNotStored(t *testing.T) {
	ctx := context.Background()
	name := newBucketName()
	store := newStore(t, gcs.SecretData())
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: region}); err != nil {
		t.Fatal(err)
	}
	w := store.Writer.(objectstore.StreamWriter)
	body := bytes.Repeat([]byte("x"), 1<<20)
	refused := errors.New("refused")
	for i := range 30 {
		key := fmt.Sprintf("refused/%d", i)
		r := io.MultiReader(bytes.NewReader(body), &failAt{err: refused})
		if err := w.PutObjectStream(ctx, name, key, r, int64(len(body))); err == nil {
			t.Fatalf("the refused stream %s was written", key)
		}
	}
	keys, err := conformance.ListKeys(ctx, store, name, "refused/")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) > 0 {
		t.Errorf("%d of 30 refused streams were stored", len(keys))
	}
}

type failAt struct{ err error }

func (f *failAt) Read([]byte) (int, error) { return 0, f.err }
