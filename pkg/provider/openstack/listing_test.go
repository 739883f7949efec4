// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

// shortPageFront is a stand-in for a Swift that answers a short listing page before the end (a
// sharded container's listing, a proxy's own limit): an HTTP front to the real Swift that cuts
// the first page of every container listing (no marker) to `keep` entries. Every other request
// passes unchanged. It counts the pages it cut.
func shortPageFront(t *testing.T, swiftURL string, keep int) (rewrite func(string) string, cut *atomic.Int32) {
	t.Helper()
	target, err := url.Parse(swiftURL)
	if err != nil {
		t.Fatal(err)
	}
	cut = &atomic.Int32{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		q := resp.Request.URL.Query()
		path := strings.Trim(resp.Request.URL.Path, "/")
		isListing := resp.Request.Method == http.MethodGet && strings.Count(path, "/") == 2 && q.Has("limit")
		if !isListing || q.Get("marker") != "" || resp.StatusCode != http.StatusOK {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		var entries []json.RawMessage
		if err := json.Unmarshal(body, &entries); err == nil && len(entries) > keep {
			body, _ = json.Marshal(entries[:keep])
			cut.Add(1)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	return func(endpoint string) string { return strings.Replace(endpoint, swiftURL, front.URL, 1) }, cut
}

// Finding 9d: a short page before the end does not end the listing; only an empty page does.
func TestListingContinuesAfterAShortPage(t *testing.T) {
	ctx := context.Background()
	direct := newStore(t, cloud.SecretData("demo"))
	name := newContainerName()
	if err := direct.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "RegionOne"}); err != nil {
		t.Fatal(err)
	}
	const n = 25
	var keys []string
	for i := range n {
		keys = append(keys, fmt.Sprintf("shoot--s--1/etcd-main/v2/Full-%03d", i))
	}
	if err := conformance.PutMany(ctx, direct, name, keys); err != nil {
		t.Fatal(err)
	}
	rewrite, cut := shortPageFront(t, cloud.SwiftURL, 3)
	viaFront := newStoreWith(t, &osprovider.Provider{ListPageSize: 10, EndpointRewrite: rewrite}, cloud.SecretData("demo"))
	listed, err := conformance.ListKeys(ctx, viaFront, name, "shoot--s--1/")
	if err != nil {
		t.Fatal(err)
	}
	if cut.Load() == 0 {
		t.Fatal("the front cut no page: the test tested nothing")
	}
	if len(listed) != n {
		t.Fatalf("listed %d of %d objects through a listing with a short first page", len(listed), n)
	}
	// And a deletion pass through the same front leaves the prefix really empty.
	prefix, _ := objectstore.EntryPrefix("shoot--s--1")
	res, err := objectstore.DeletePrefix(ctx, viaFront, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Deleted != n {
		t.Fatalf("got %+v, %v; want all %d deleted", res, err, n)
	}
	if left, _ := conformance.ListKeys(ctx, direct, name, "shoot--s--1/"); len(left) != 0 {
		t.Fatalf("left %d objects after a pass reported done", len(left))
	}
}
