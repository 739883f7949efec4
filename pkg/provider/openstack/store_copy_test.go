// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

// TestStaticLargeObjects streams an object of several segments (the segment lowered to 64 KiB)
// as a static large object and reads it back; a short stream of several segments and one that
// fails leave neither the object nor a segment. A copy of a source above the server-side limit
// (lowered to 1 byte) is streamed as a static large object, and refused when the source was
// written again since its listing.
func TestStaticLargeObjects(t *testing.T) {
	defer osprovider.SetStreamLimits(64<<10, 1)()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store := newStore(t, cloud.SecretData("demo"))
	from, to := newContainerName(), newContainerName()
	for _, b := range []string{from, to} {
		if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: b, Region: "RegionOne"}); err != nil {
			t.Fatal(err)
		}
	}
	w := store.Writer.(objectstore.StreamWriter)
	data := bytes.Repeat([]byte("0123456789abcdef"), 3<<12+1) // 192 KiB and 16 bytes: four segments
	if err := w.PutObjectStream(ctx, from, "big", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("PutObjectStream: %v", err)
	}
	if got, err := objectstore.ReadObject(ctx, store, from, "big"); err != nil || !bytes.Equal(got, data) {
		t.Errorf("read back %d bytes (%v), same %t", len(got), err, bytes.Equal(got, data))
	}
	keys := func(bucket string) []string {
		var out []string
		if err := store.ListObjects(ctx, bucket, "", func(p []objectstore.ObjectVersion) error {
			for _, o := range p {
				out = append(out, o.Key)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := keys(from); len(got) != 5 || got[0] != "big" || !strings.HasPrefix(got[1], "big/slo-") {
		t.Errorf("listed %v; want the manifest and its four segments under big/slo-", got)
	}
	before := keys(from)
	for name, r := range map[string]io.Reader{
		"short":   io.LimitReader(bytes.NewReader(data), int64(len(data))-1),
		"longer":  io.MultiReader(bytes.NewReader(data), strings.NewReader("x")),
		"failing": io.MultiReader(bytes.NewReader(data[:100<<10]), iotestErr{}),
	} {
		if err := w.PutObjectStream(ctx, from, name, r, int64(len(data))); err == nil {
			t.Errorf("a %s stream of four segments was written", name)
		}
	}
	if after := keys(from); !equal(after, before) {
		t.Errorf("refused streams left %v; before them %v", after, before)
	}

	var listed objectstore.ObjectVersion
	if err := store.ListObjects(ctx, from, "big", func(p []objectstore.ObjectVersion) error { listed = p[0]; return nil }); err != nil {
		t.Fatal(err)
	}
	c := store.DataPlane.(objectstore.ServerSideCopier)
	if err := c.CopyObject(ctx, from, listed, to, "copied"); err != nil {
		t.Fatalf("CopyObject: %v", err)
	}
	if got, err := objectstore.ReadObject(ctx, store, to, "copied"); err != nil || !bytes.Equal(got, data) {
		t.Errorf("copied: read back %d bytes (%v), same %t", len(got), err, bytes.Equal(got, data))
	}
	if err := store.PutObject(ctx, from, "big", data[1:]); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyObject(ctx, from, listed, to, "stale"); err == nil || errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a source written again since its listing: %v; want a refusal that is no ErrNotFound", err)
	}
	if _, err := store.OpenObject(ctx, to, "stale", ""); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a refused copy left an object: %v", err)
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func equal(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }
