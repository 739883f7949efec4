// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestLongBodiesAreReadWhileTheyFlow: the GET of a snapshot whose body flows for longer than
// the request timeout (a streamed copy or a drill of a large snapshot) reads it whole; a body
// that stops fails within the timeout. MinIO behind a proxy that trickles GET bodies.
func TestLongBodiesAreReadWhileTheyFlow(t *testing.T) {
	name := newBucketName()
	if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	p := &awsprovider.Provider{RequestTimeout: stack.FlowTimeout}
	stack.CheckFlowingBodies(t, minio.Endpoint, newStore(t, minio.SecretData()), name, func(t *testing.T, proxyURL string) objectstore.DataPlane {
		return newStoreWith(t, p, withData(minio.SecretData(), "endpoint", proxyURL), nil)
	})
}
