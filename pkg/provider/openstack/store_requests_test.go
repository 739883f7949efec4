// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestListingRequestsPerPage counts what an inventory's listing (a new store each time, as every
// reconcile builds one) sends to Swift: its pages and exactly one request more, the empty page
// that ends it, whether the objects fill the last page exactly or not; nothing else on the
// container. The empty page stays: a short page is not taken as the end, because Swift-API
// servers do answer short pages before the end (Ceph RGW, see TestListingContinuesAfterAShortPage).
func TestListingRequestsPerPage(t *testing.T) {
	const pageSize = 10
	ctx := context.Background()
	proxy, err := stack.StartCountingProxy(cloud.SwiftURL, func(r *http.Request) string {
		if r.Method == http.MethodGet && r.URL.Query().Has("limit") {
			return "listing"
		}
		return r.Method + " other"
	})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	rewrite := func(endpoint string) string { return strings.Replace(endpoint, cloud.SwiftURL, proxy.URL, 1) }
	direct := newStore(t, cloud.SecretData("demo"))
	for _, n := range []int{2 * pageSize, 2*pageSize + 5} {
		t.Run(fmt.Sprintf("%d objects", n), func(t *testing.T) {
			name := newContainerName()
			if err := direct.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "RegionOne"}); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for i := range n {
				keys = append(keys, fmt.Sprintf("shoot--s--1/etcd-main/v2/Full-%03d", i))
			}
			keys = append(keys, "shoot--s--10/etcd-main/v2/Full-000")
			if err := conformance.PutMany(ctx, direct, name, keys); err != nil {
				t.Fatal(err)
			}
			proxy.Reset()
			for range 2 { // two inventories
				through := newStoreWith(t, &osprovider.Provider{ListPageSize: pageSize, EndpointRewrite: rewrite}, cloud.SecretData("demo"))
				listed := 0
				if err := through.ListObjects(ctx, name, "shoot--s--1/", func(page []objectstore.ObjectVersion) error {
					listed += len(page)
					return nil
				}); err != nil || listed != n {
					t.Fatalf("listed %d, %v; want %d", listed, err, n)
				}
			}
			pages := (n + pageSize - 1) / pageSize
			got := proxy.String()
			// GET other: /info, read once per store when it authenticates (the bulk-delete limit).
			if want := fmt.Sprint(map[string]int{"GET other": 2, "listing": 2 * (pages + 1)}); got != want {
				t.Fatalf("two listings of %d objects in pages of %d sent %s; want %s", n, pageSize, got, want)
			}
		})
	}
}
