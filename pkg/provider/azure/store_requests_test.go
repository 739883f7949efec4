// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestListingIsOneRequestPerPage: an inventory's listing (a new store each time, as every
// reconcile builds one) is one List Blobs per page and nothing else, whether the entry's blobs
// fill the last page exactly or not, and lists every blob once.
func TestListingIsOneRequestPerPage(t *testing.T) {
	const pageSize = 3
	proxy, err := stack.StartCountingProxy("http://"+azurite.Host, func(r *http.Request) string {
		return strings.TrimSpace(r.Method + " " + r.URL.Query().Get("comp"))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	through := func() conformance.Stores {
		return newStoreWith(t, &azureprovider.Provider{ListPageSize: pageSize}, with(azurite.SecretData(), "domain", strings.TrimPrefix(proxy.URL, "http://")))
	}
	for _, n := range []int{2 * pageSize, 2*pageSize + 1} {
		t.Run(fmt.Sprintf("%d blobs", n), func(t *testing.T) {
			direct := newStore(t, azurite.SecretData())
			name := newBucketName()
			if err := direct.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for i := range n {
				keys = append(keys, fmt.Sprintf("shoot--a--b--1/etcd-main/v2/Full-%04d", i))
			}
			keys = append(keys, "shoot--a--b--10/etcd-main/v2/Full-0000")
			if err := conformance.PutMany(ctx(t), direct, name, keys); err != nil {
				t.Fatal(err)
			}
			proxy.Reset()
			for range 2 { // two inventories
				listed := 0
				if err := through().ListObjects(context.Background(), name, "shoot--a--b--1/", func(page []objectstore.ObjectVersion) error {
					listed += len(page)
					return nil
				}); err != nil || listed != n {
					t.Fatalf("listed %d, %v; want %d", listed, err, n)
				}
			}
			pages := (n + pageSize - 1) / pageSize
			want := fmt.Sprint(map[string]int{"GET list": 2 * pages})
			got := proxy.String()
			if got != want {
				t.Fatalf("two listings of %d blobs in pages of %d sent %s; want %s", n, pageSize, got, want)
			}
		})
	}
}
