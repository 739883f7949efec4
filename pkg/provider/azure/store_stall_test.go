// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestLongBodiesAreReadWhileTheyFlow: the GET of a blob whose body flows for longer than the
// request timeout is read whole; a body that stops fails within the timeout instead of hanging.
// Azurite behind a proxy that trickles GET bodies.
func TestLongBodiesAreReadWhileTheyFlow(t *testing.T) {
	name := newBucketName()
	direct := newStore(t, azurite.SecretData())
	if err := direct.EnsureBucket(context.Background(), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
		t.Fatal(err)
	}
	p := &azureprovider.Provider{RequestTimeout: stack.FlowTimeout}
	stack.CheckFlowingBodies(t, "http://"+azurite.Host, direct, name, func(t *testing.T, proxyURL string) objectstore.DataPlane {
		return newStoreWith(t, p, with(azurite.SecretData(), "domain", strings.TrimPrefix(proxyURL, "http://")))
	})
}
