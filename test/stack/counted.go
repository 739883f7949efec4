// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// CheckProbeIsOneCountedRequest checks that a probe of the missing bucket is one request to the
// store, which the metrics transport counts under the provider type typ, the operation of its
// context and the status (404). Requests of another status (a first authentication) are not
// counted here.
func CheckProbeIsOneCountedRequest(t *testing.T, store objectstore.DataPlane, typ, missing string) {
	t.Helper()
	counted := metrics.CloudRequests.WithLabelValues(typ, "probe", "404")
	before := testutil.ToFloat64(counted)
	err := store.Probe(objectstore.WithOperation(context.Background(), "probe"), missing)
	if !errors.Is(err, objectstore.ErrBucketNotFound) {
		t.Fatalf("Probe of a missing bucket: %v; want ErrBucketNotFound", err)
	}
	if n := testutil.ToFloat64(counted) - before; n != 1 {
		t.Fatalf("the probe made %v counted requests answered 404; want 1", n)
	}
}
