// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package memstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

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
