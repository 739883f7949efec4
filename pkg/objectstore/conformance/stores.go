// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Stores is one store reached with one set of credentials: its data plane, its management plane
// (built with the providerConfig the suite's buckets are made with) and the Writer the suite
// writes its fixtures with. Run fails on a nil one where the case needs it.
type Stores struct {
	objectstore.DataPlane
	objectstore.Management
	objectstore.Writer
}

// Full is what most stores are: one value with both planes and a Writer.
type Full interface {
	objectstore.DataPlane
	objectstore.Management
	objectstore.Writer
}

// StoresOf is the Stores of one value that has both planes and a Writer.
func StoresOf(s Full) Stores { return Stores{DataPlane: s, Management: s, Writer: s} }

// missing names the nil planes of s.
func (s Stores) missing(needManagement bool) []string {
	var out []string
	if s.DataPlane == nil {
		out = append(out, "DataPlane")
	}
	if needManagement && s.Management == nil {
		out = append(out, "Management")
	}
	if s.Writer == nil {
		out = append(out, "Writer")
	}
	return out
}

// Cloud builds a store's planes and Writer from credentials of type Creds and a decoded
// providerConfig C: what the harness needs of a provider (provider.TestCloud is one). It is
// declared here, on objectstore's types only, so that the harness sits below the providers.
type Cloud[Creds, C any] interface {
	NewDataPlane(ctx context.Context, creds Creds) (objectstore.DataPlane, error)
	NewManagement(ctx context.Context, creds Creds, cfg C) (objectstore.Management, error)
	NewWriter(ctx context.Context, creds Creds) (objectstore.Writer, error)
}

// StoresFor builds the Stores of creds: c's data plane, its management plane with cfg and its
// Writer. A failure ends the test.
func StoresFor[Creds, C any](t testing.TB, c Cloud[Creds, C], creds Creds, cfg C) Stores {
	t.Helper()
	s, err := NewStores(context.Background(), c, creds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// NewStores is StoresFor for callers without a test (the demo, the benchmarks).
func NewStores[Creds, C any](ctx context.Context, c Cloud[Creds, C], creds Creds, cfg C) (Stores, error) {
	data, err := c.NewDataPlane(ctx, creds)
	if err != nil {
		return Stores{}, err
	}
	mgmt, err := c.NewManagement(ctx, creds, cfg)
	if err != nil {
		return Stores{}, err
	}
	w, err := c.NewWriter(ctx, creds)
	if err != nil {
		return Stores{}, err
	}
	return Stores{DataPlane: data, Management: mgmt, Writer: w}, nil
}

// ExcludeMarker is a provider's test Writer that can put etcd-backup-restore's exclude mark on
// an object with the store's own means (Harness.MarkExcluded).
type ExcludeMarker interface {
	MarkExcluded(ctx context.Context, bucket, key string) error
}

// MarkerOf is s's Writer's MarkExcluded; it panics when the Writer has none (a harness bug).
func MarkerOf(s Stores) func(ctx context.Context, bucket, key string) error {
	return s.Writer.(ExcludeMarker).MarkExcluded
}
