// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// requestingStore sends one request to url for every listing, as a provider's SDK would.
type requestingStore struct {
	*memstore.Store

	client *http.Client
	url    string
}

func (s requestingStore) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return s.Store.ListObjects(ctx, bucket, prefix, fn)
}

func TestTransportCountsEveryRequestByTheStoreOperation(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-down" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: metrics.Transport("test", nil)}
	mem := memstore.New(10)
	ctx := context.Background()
	if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	count := func(op, code string) float64 {
		return testutil.ToFloat64(metrics.CloudRequests.WithLabelValues("test", op, code))
	}
	type series struct{ op, code string }
	want := []series{{"list_objects", "200"}, {"inventory", "200"}, {"list_objects", "503"}, {"list_objects", "network_error"}}
	before := map[series]float64{} // the registry is global: compare what this test added
	for _, s := range want {
		before[s] = count(s.op, s.code)
	}

	// The deletion engine names its listing; a caller that named its context (the inventory)
	// keeps its name.
	emptyBucket := func(ctx context.Context, store objectstore.DataPlane) error {
		_, err := objectstore.DeletePrefix(ctx, store, "b", objectstore.WholeBucket(), objectstore.DeleteOptions{})
		return err
	}
	store := requestingStore{Store: mem, client: client, url: srv.URL + "/ok"}
	if err := emptyBucket(ctx, store); err != nil {
		t.Fatal(err)
	}
	if err := emptyBucket(objectstore.WithOperation(ctx, "inventory"), store); err != nil {
		t.Fatal(err)
	}
	throttled := requestingStore{Store: mem, client: client, url: srv.URL + "/slow-down"}
	_ = emptyBucket(ctx, throttled)
	unreachable := requestingStore{Store: mem, client: client, url: "http://127.0.0.1:1/"}
	if err := emptyBucket(ctx, unreachable); err == nil {
		t.Fatal("a request to a closed port succeeded")
	}

	for _, s := range want {
		if got := count(s.op, s.code) - before[s]; got != 1 {
			t.Errorf("cloud_requests_total{operation=%q,code=%q} grew by %v, want 1", s.op, s.code, got)
		}
	}
	if got := testutil.CollectAndCount(metrics.CloudRequestDuration); got < 2 {
		t.Errorf("%d latency series, want one per operation", got)
	}
}
