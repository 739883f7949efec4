// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"testing"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestLongBodiesAreReadWhileTheyFlow: the GET of an object whose body flows for longer than the
// request timeout is read whole; a body that stops fails within the timeout instead of hanging.
// fake-gcs-server (behind its front) behind a proxy that trickles GET bodies.
func TestLongBodiesAreReadWhileTheyFlow(t *testing.T) {
	name := newBucketName()
	data := gcs.SecretData()
	direct := newStore(t, data)
	if err := direct.EnsureBucket(context.Background(), objectstore.Bucket{Name: name, Region: region}); err != nil {
		t.Fatal(err)
	}
	p := &gcpprovider.Provider{RequestTimeout: stack.FlowTimeout, IAMEndpoint: testProvider.IAMEndpoint, QuotasEndpoint: testProvider.QuotasEndpoint}
	stack.CheckFlowingBodies(t, gcs.URL, direct, name, func(t *testing.T, proxyURL string) objectstore.DataPlane {
		return conformance.StoresFor(t, p, provider.Credentials{Data: with(data, "storageAPIEndpoint", proxyURL+"/storage/v1/"), Region: region}, &gcpapi.BackupBucketConfig{})
	})
}
