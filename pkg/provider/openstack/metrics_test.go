// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestProbeIsOneCountedRequest: a probe of a missing bucket is one request to the store, which
// the metrics transport counts under the provider, the operation of its context and the status.
func TestProbeIsOneCountedRequest(t *testing.T) {
	stack.CheckProbeIsOneCountedRequest(t, newStore(t, cloud.SecretData("demo")), osprovider.Type, newContainerName())
}

// TestAnUnchangedContainerIsNotWritten: a second reconcile of a container as declared is one
// counted request (the HEAD that reads it), without the POST that would write it again.
func TestAnUnchangedContainerIsNotWritten(t *testing.T) {
	store := newStore(t, cloud.SecretData("demo"))
	name := newContainerName()
	ctx := objectstore.WithOperation(context.Background(), "ensure_bucket")
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: name}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.DeleteBucket(context.Background(), name) })
	counted := metrics.CloudRequests.WithLabelValues(osprovider.Type, "ensure_bucket", "204")
	before := testutil.ToFloat64(counted)
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: name}); err != nil {
		t.Fatal(err)
	}
	if n := testutil.ToFloat64(counted) - before; n != 1 {
		t.Fatalf("a reconcile of an unchanged container made %v requests answered 204; want 1 (the read)", n)
	}
}
