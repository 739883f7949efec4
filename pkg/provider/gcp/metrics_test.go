package gcp_test

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

// TestProbeIsOneCountedRequest: a probe of a missing bucket is one request to the store, which
// the metrics transport counts under the provider, the operation of its context and the status.
func TestProbeIsOneCountedRequest(t *testing.T) {
	store := newStore(t, gcs.SecretData())
	counted := metrics.CloudRequests.WithLabelValues(gcpprovider.Type, "probe", "404")
	before := testutil.ToFloat64(counted)
	err := store.Probe(metrics.WithOperation(context.Background(), "probe"), newBucketName())
	if !errors.Is(err, objectstore.ErrBucketNotFound) {
		t.Fatalf("Probe of a missing bucket: %v; want ErrBucketNotFound", err)
	}
	if n := testutil.ToFloat64(counted) - before; n != 1 {
		t.Fatalf("the probe made %v counted requests answered 404; want 1", n)
	}
}
