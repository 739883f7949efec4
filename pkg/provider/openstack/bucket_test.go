// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

// The limit the names are checked against is the one the cluster advertises in /info.
func TestContainerNameLimitIsTheClusters(t *testing.T) {
	u, err := url.Parse(cloud.SwiftURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path, u.RawQuery = "/info", ""
	resp, err := http.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		Swift struct {
			MaxContainerNameLength int `json:"max_container_name_length"`
		} `json:"swift"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if info.Swift.MaxContainerNameLength != osapi.MaxContainerNameLength {
		t.Fatalf("the cluster's max_container_name_length is %d; the names are checked against %d", info.Swift.MaxContainerNameLength, osapi.MaxContainerNameLength)
	}
}

// A Swift without object versioning drops X-Versions-Enabled without a word: versioning: true is
// refused before any container request. The stand-in's Swift has versioning, so a stand-in
// object-store endpoint (real Keystone in front) answers /info without it and records any other
// request.
func TestVersioningTheClusterCannotHonourIsRefused(t *testing.T) {
	var mu sync.Mutex
	var others []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/info" {
			_, _ = w.Write([]byte(`{"swift":{"version":"2.30.1","max_container_name_length":256},"bulk_delete":{"max_deletes_per_request":10000}}`))
			return
		}
		mu.Lock()
		others = append(others, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	recorded := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(others)
	}
	p := &osprovider.Provider{EndpointRewrite: func(endpoint string) string {
		u, err := url.Parse(endpoint)
		if err != nil {
			t.Error(err)
			return endpoint
		}
		return srv.URL + u.Path
	}}
	cfg, err := p.Decode([]byte(osConfigHead + "versioning: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := p.NewManagement(context.Background(), provider.Credentials{Data: cloud.SecretData("demo"), Region: "RegionOne"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = store.EnsureBucket(context.Background(), objectstore.Bucket{Name: newContainerName(), Region: "RegionOne"})
	if !errors.Is(err, objectstore.ErrUnsupported) || !strings.Contains(err.Error(), "spec.providerConfig.versioning") {
		t.Fatalf("got %v; want ErrUnsupported naming spec.providerConfig.versioning", err)
	}
	if got := recorded(); len(got) > 0 {
		t.Fatalf("requests besides /info were sent: %v", got)
	}
	// Without versioning asked for, the same cluster is used.
	plain := &osapi.BackupBucketConfig{}
	store, err = p.NewManagement(context.Background(), provider.Credentials{Data: cloud.SecretData("demo"), Region: "RegionOne"}, plain)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.EnsureBucket(context.Background(), objectstore.Bucket{Name: newContainerName(), Region: "RegionOne"}); errors.Is(err, objectstore.ErrUnsupported) || len(recorded()) == 0 {
		t.Fatalf("a container without versioning: %v after %v; want the container requested", err, recorded())
	}
}
