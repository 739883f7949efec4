// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestLongBodiesAreReadWhileTheyFlow: the GET of an object whose body flows for longer than the
// request timeout is read whole; a body that stops fails within the timeout instead of hanging.
// Swift behind a proxy that trickles GET bodies (Keystone is asked directly; its catalog's
// object-store URL is rewritten to the proxy).
func TestLongBodiesAreReadWhileTheyFlow(t *testing.T) {
	name := newContainerName()
	direct := newStore(t, cloud.SecretData("demo"))
	if err := direct.EnsureBucket(context.Background(), objectstore.Bucket{Name: name, Region: "RegionOne"}); err != nil {
		t.Fatal(err)
	}
	stack.CheckFlowingBodies(t, cloud.SwiftURL, direct, name, func(t *testing.T, proxyURL string) objectstore.DataPlane {
		rewrite := func(endpoint string) string { return strings.Replace(endpoint, cloud.SwiftURL, proxyURL, 1) }
		return newStoreWith(t, &osprovider.Provider{RequestTimeout: stack.FlowTimeout, EndpointRewrite: rewrite}, cloud.SecretData("demo"))
	})
}
