package conformance

import (
	"context"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestCloud is a provider's Cloud with the Writer its tests write fixtures with (no controller
// writes objects, so the Writer is not part of provider.Cloud).
type TestCloud[C config.Bucket] interface {
	provider.Cloud[C]
	// NewWriter builds the Writer of creds.
	NewWriter(ctx context.Context, creds provider.Credentials) (objectstore.Writer, error)
}

// StoresFor builds the Stores of creds: c's data plane, its management plane with cfg and its
// Writer. A failure ends the test.
func StoresFor[C config.Bucket](t testing.TB, c TestCloud[C], creds provider.Credentials, cfg C) Stores {
	t.Helper()
	s, err := NewStores(context.Background(), c, creds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// NewStores is StoresFor for callers without a test (the demo, the benchmarks).
func NewStores[C config.Bucket](ctx context.Context, c TestCloud[C], creds provider.Credentials, cfg C) (Stores, error) {
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
