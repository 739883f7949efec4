// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestAnUnchangedContainerIsNotWritten: the first reconcile creates the container; a second one
// of the container as it is reads it and writes nothing.
func TestAnUnchangedContainerIsNotWritten(t *testing.T) {
	proxy, err := stack.StartProxy("http://"+azurite.Host, stack.ProxyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	store := newStore(t, with(azurite.SecretData(), "domain", strings.TrimPrefix(proxy.URL, "http://")))
	name := newBucketName()
	ctx := context.Background()
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: name}); err != nil {
		t.Fatal(err)
	}
	if n := proxy.Methods()[http.MethodPut]; n != 1 {
		t.Fatalf("creating the container sent %d PUTs; want 1", n)
	}
	before := proxy.Methods()
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: name}); err != nil {
		t.Fatal(err)
	}
	after := proxy.Methods()
	for _, method := range []string{http.MethodPut, http.MethodPost, http.MethodDelete} {
		if n := after[method] - before[method]; n != 0 {
			t.Errorf("a reconcile of an unchanged container sent %d %s requests; want none", n, method)
		}
	}
}
