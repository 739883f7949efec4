// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// requestingSource sends one request through client for every call, as a provider's SDK
// does through metrics.Transport, then answers from the memstore.
type requestingSource struct {
	memSource

	client *http.Client
	url    string
}

func (s requestingSource) request(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (s requestingSource) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	if err := s.request(ctx); err != nil {
		return err
	}
	return s.memSource.ListObjects(ctx, bucket, prefix, fn)
}

func (s requestingSource) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	if err := s.request(ctx); err != nil {
		return nil, err
	}
	return s.memSource.OpenObject(ctx, bucket, key, version)
}

func (s requestingSource) SnapshotRule(ctx context.Context, bucket string) (objectstore.SnapshotRule, error) {
	if err := s.request(ctx); err != nil {
		return objectstore.SnapshotRule{}, err
	}
	return s.memSource.SnapshotRule(ctx, bucket)
}

// TestDrillNamesItsRequests: in gardener_backup_cloud_requests_total a drill's downloads (the
// full snapshot and each delta) are get_object, as every store's downloads are, and its listing
// (the rule and the listing) restore_drill; none is other.
func TestDrillNamesItsRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	const provider = "drill-test"
	count := func(op string) float64 {
		return testutil.ToFloat64(metrics.CloudRequests.WithLabelValues(provider, op, "200"))
	}
	f := newChain(t, ".gz")
	src := requestingSource{memSource: memSource{store(t, f.objects)}, client: &http.Client{Transport: metrics.Transport(provider, nil)}, url: srv.URL}
	results, err := Drill(context.Background(), src, bucket, entry, Options{ScratchDir: t.TempDir()})
	if err != nil || len(results) != 1 || results[0].Err != nil {
		t.Fatalf("Drill: %+v, %v; want etcd-main restored", results, err)
	}
	for op, want := range map[string]float64{objectstore.OpOpenObject: float64(len(f.names)), listOperation: 2, objectstore.OpOther: 0} {
		if got := count(op); got != want {
			t.Errorf("cloud_requests_total{provider=%q,operation=%q,code=\"200\"} = %v; want %v", provider, op, got, want)
		}
	}
}
