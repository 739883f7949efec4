// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"errors"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestProbeIsOneCountedRequest: a probe of a missing bucket is one request to the store, which
// the metrics transport counts under the provider, the operation of its context and the status.
func TestProbeIsOneCountedRequest(t *testing.T) {
	stack.CheckProbeIsOneCountedRequest(t, newStore(t, gcs.SecretData()), gcpprovider.Type, newBucketName())
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
