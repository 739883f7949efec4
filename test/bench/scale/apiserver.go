// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/bench/benchutil"
)

// apiServer reaches envtest's kube-apiserver with its admin credentials, for what it says about
// itself: /metrics (apiserver_request_total) and /debug/pprof (served with --profiling, the default).
type apiServer struct {
	host   string
	client *http.Client
}

func newAPIServer(cfg *rest.Config) (*apiServer, error) {
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &apiServer{host: strings.TrimSuffix(cfg.Host, "/"), client: c}, nil
}

// get returns the body of a GET of path (a 20 s CPU profile takes 20 s).
func (a *apiServer) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.host+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("kube-apiserver %s: %s: %.200s", path, resp.Status, body)
	}
	return body, err
}

func (a *apiServer) metrics(ctx context.Context) (benchutil.MetricSet, error) {
	body, err := a.get(ctx, "/metrics")
	if err != nil {
		return nil, err
	}
	return benchutil.Parse(string(body)), nil
}

// ownRequests counts the benchmark's own requests to kube-apiserver by resource and verb, keyed
// as apiserver_request_total's labels are (see requestKey), so that they can be told apart from
// the extension's.
type ownRequests struct {
	mu sync.Mutex
	n  map[string]float64
}

func (o *ownRequests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		o.mu.Lock()
		if o.n == nil {
			o.n = map[string]float64{}
		}
		o.n[requestKey(r)]++
		o.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

func (o *ownRequests) counts() map[string]float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.n)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// requestKey names a request as "<resource>[ <subresource>] <VERB>", the labels kube-apiserver
// counts it under: /api/v1[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]] and
// /apis/<group>/<version>/... alike; a GET without a name is a LIST (a WATCH with watch=true).
func requestKey(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return r.URL.Path + " " + r.Method
	}
	// namespaces/<ns>/<resource>... but not the namespace itself (namespaces[/<name>]).
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return r.URL.Path + " " + r.Method
	}
	key := parts[0]
	if len(parts) >= 3 {
		key += " " + parts[2]
	}
	verb := r.Method
	if r.Method == http.MethodGet && len(parts) == 1 {
		verb = "LIST"
		if r.URL.Query().Get("watch") == "true" {
			verb = "WATCH"
		}
	}
	return key + " " + verb
}

// printAPIServer prints kube-apiserver's own count of requests in the phase (all clients), the
// benchmark's own requests among them and the rest (the extension's, and kube-apiserver's own
// loopback ones), per entry, the top 10 by the rest.
func printAPIServer(before, after snapshot, n float64) {
	total := benchutil.Delta(before.apiserver, after.apiserver, "apiserver_request_total", "") // all series
	all := diffKeys(before.apiserver.ByLabels("apiserver_request_total", "resource", "subresource", "verb"),
		after.apiserver.ByLabels("apiserver_request_total", "resource", "subresource", "verb"))
	own := diffKeys(before.own, after.own)
	rest := map[string]float64{}
	for k, v := range all {
		rest[k] = v - own[k]
	}
	keys := slices.Collect(maps.Keys(all))
	sort.Slice(keys, func(i, j int) bool { return rest[keys[i]] > rest[keys[j]] })
	var sum, ownSum float64
	for _, v := range total {
		sum += v
	}
	for _, v := range own {
		ownSum += v
	}
	fmt.Printf("kube-apiserver's own count (apiserver_request_total): %.0f requests, %.2f per entry; the benchmark's %.0f (%.2f per entry); the rest (extension, kube-apiserver's loopback) %.2f per entry; top 10 by the rest:\n",
		sum, sum/n, ownSum, ownSum/n, (sum-ownSum)/n)
	for i, k := range keys {
		if i == 10 {
			break
		}
		fmt.Printf("  %-44s rest %8.2f  (all %8.2f, benchmark %6.2f) per entry\n", k, rest[k]/n, all[k]/n, own[k]/n)
	}
}

// diffKeys is after minus before, by key, without the zeros.
func diffKeys(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// kubeAPIServerBinary is envtest's kube-apiserver (for pprof's symbols; "" if unknown).
func kubeAPIServerBinary() string {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		return ""
	}
	return dir + "/kube-apiserver"
}
