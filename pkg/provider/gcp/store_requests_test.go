// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"fmt"
	"net/http"
	"testing"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

// TestListingIsOneRequestPerPage: an inventory's listing (a new store each time, as every
// reconcile builds one) is one objects.list per page and no other request of the bucket,
// whether the entry's objects fill the last page exactly or not, and lists every object once.
func TestListingIsOneRequestPerPage(t *testing.T) {
	const pageSize = 3
	p := &gcpprovider.Provider{IAMEndpoint: testProvider.IAMEndpoint, ListPageSize: pageSize}
	data := gcs.SecretData()
	for _, n := range []int{2 * pageSize, 2*pageSize + 1} {
		t.Run(fmt.Sprintf("%d objects", n), func(t *testing.T) {
			ctx := ctxFor(t)
			direct := newStore(t, data)
			name := newBucketName()
			if err := ensure(t, direct, name, nil); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for i := range n {
				keys = append(keys, fmt.Sprintf("shoot--a--b--1/etcd-main/v2/Full-%04d", i))
			}
			keys = append(keys, "shoot--a--b--10/etcd-main/v2/Full-0000")
			if err := conformance.PutMany(ctx, direct, name, keys); err != nil {
				t.Fatal(err)
			}
			before := len(gcs.Requests("/b/" + name))
			for range 2 { // two inventories
				s := conformance.StoresFor(t, p, provider.Credentials{Data: data, Region: region}, &gcpapi.BackupBucketConfig{})
				listed := 0
				if err := s.ListObjects(ctx, name, "shoot--a--b--1/", func(page []objectstore.ObjectVersion) error {
					listed += len(page)
					return nil
				}); err != nil || listed != n {
					t.Fatalf("listed %d, %v; want %d", listed, err, n)
				}
			}
			counts := map[string]int{}
			for _, r := range gcs.Requests("/b/" + name)[before:] {
				op := r.Method + " " + r.Path
				if r.Method == http.MethodGet && r.Path == "/storage/v1/b/"+name+"/o" {
					op = "objects.list"
				}
				counts[op]++
			}
			pages := (n + pageSize - 1) / pageSize
			if got, want := fmt.Sprint(counts), fmt.Sprint(map[string]int{"objects.list": 2 * pages}); got != want {
				t.Fatalf("two listings of %d objects in pages of %d sent %s; want %s", n, pageSize, got, want)
			}
		})
	}
}
