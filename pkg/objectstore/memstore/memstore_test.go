// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

func TestConformance(t *testing.T) {
	store := memstore.New(50)
	var n atomic.Int64
	conformance.Run(t, conformance.Harness{
		Store:         conformance.StoresOf(store),
		NewBucketName: func() string { return fmt.Sprintf("bucket-%d", n.Add(1)) },
		Region:        "local",
		// The in-memory store takes any credentials: it has no wrong ones.
		Unsupported:   []conformance.Feature{conformance.BadCredentials},
		OtherRegion:   "elsewhere",
		ForeignBucket: func(*testing.T) string { store.SetForeign("taken"); return "taken" },
		Versioning:    store.SetVersioning,
		MarkExcluded:  store.MarkExcluded,
		SmallPages:    store.WithPageSize(2),
		Lock: func(_ context.Context, bucket, key string, until time.Time) error {
			store.Lock(bucket, key, until)
			return nil
		},
		Unlock: func(_ context.Context, bucket, key string) error {
			store.Unlock(bucket, key)
			return nil
		},
		DeferralCovers: func(_ context.Context, bucket, prefix string) error {
			if !store.Deferred(bucket, prefix) {
				return fmt.Errorf("no deferral recorded for %q", prefix)
			}
			return nil
		},
	})
}

func TestIssuerConformance(t *testing.T) {
	store := memstore.New(50)
	var n atomic.Int64
	conformance.RunIssuer(t, conformance.IssuerHarness{
		Harness: conformance.Harness{
			Store:         conformance.StoresOf(store),
			NewBucketName: func() string { return fmt.Sprintf("bucket-%d", n.Add(1)) },
			Region:        "local",
		},
		Issuer: store.Issuer(),
		StoreFor: func(_ *testing.T, data map[string][]byte) conformance.Stores {
			return conformance.StoresOf(store.ForCredential(data))
		},
	})
}

func TestPutObjectStreamWritesExactlySize(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(10)
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{4, 6} {
		if err := s.PutObjectStream(ctx, "b", "k", strings.NewReader("12345"), size); err == nil {
			t.Errorf("a stream of 5 bytes was written as %d", size)
		}
	}
	if _, err := objectstore.ReadObject(ctx, s, "b", "k"); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("a failed stream left an object: %v", err)
	}
	if err := s.PutObjectStream(ctx, "b", "k", strings.NewReader("12345"), 5); err != nil {
		t.Fatal(err)
	}
	if got, err := objectstore.ReadObject(ctx, s, "b", "k"); err != nil || string(got) != "12345" {
		t.Errorf("read %q, %v", got, err)
	}
}
