// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

// TestProbeIsOneCountedRequest: a probe of a missing bucket is one request to the store, which
// the metrics transport counts under the provider, the operation of its context and the status.
func TestProbeIsOneCountedRequest(t *testing.T) {
	store := newStore(t, gcs.SecretData())
	counted := metrics.CloudRequests.WithLabelValues(gcpprovider.Type, "probe", "404")
	before := testutil.ToFloat64(counted)
	err := store.Probe(objectstore.WithOperation(context.Background(), "probe"), newBucketName())
	if !errors.Is(err, objectstore.ErrBucketNotFound) {
		t.Fatalf("Probe of a missing bucket: %v; want ErrBucketNotFound", err)
	}
	if n := testutil.ToFloat64(counted) - before; n != 1 {
		t.Fatalf("the probe made %v counted requests answered 404; want 1", n)
	}
}

func TestWorkloadIdentity(t *testing.T) {
	config := gcs.WorkloadIdentityConfig("wi-token-1")
	newWI := func(token string) (conformance.Stores, error) {
		data := map[string][]byte{"config": config, "storageAPIEndpoint": []byte(gcs.Endpoint)}
		if token != "" {
			data["token"] = []byte(token)
		}
		return storesWith(data, true, region, nil)
	}
	s, err := newWI("wi-token-1")
	if err != nil {
		t.Fatal(err)
	}
	name := newBucketName()
	if err := ensure(t, s, name, nil); err != nil {
		t.Fatalf("EnsureBucket with workload identity: %v", err)
	}
	wrong, err := newWI("not-a-token-of-ours")
	if err != nil {
		t.Fatal(err)
	}
	if err := ensure(t, wrong, name, nil); !errors.Is(err, objectstore.ErrUnauthenticated) {
		t.Fatalf("with a token the STS refuses: %v; want ErrUnauthenticated", err)
	}
	if _, err := newWI(""); !errors.Is(err, objectstore.ErrUnauthenticated) {
		t.Fatalf("without a token: %v; want ErrUnauthenticated", err)
	}
}
