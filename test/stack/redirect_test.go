// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestRedirectServesRoutedHostsAndRefusesOthers(t *testing.T) {
	standIn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "stand-in "+r.Host+r.URL.Path) })
	r, err := StartRedirect(t.TempDir(), map[string]http.Handler{"storage.googleapis.com": standIn, ".blob.example": standIn})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := r.Client(t)
	for _, u := range []string{"https://storage.googleapis.com/storage/v1/b", "https://acct.blob.example/c"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "stand-in " + strings.TrimPrefix(u, "https://"); string(body) != want {
			t.Errorf("GET %s answered %q; want %q", u, body, want)
		}
	}
	if _, err := c.Get("https://management.azure.com/"); err == nil {
		t.Error("a host without a route was reached")
	}
	if refused := r.Refused(); !slices.Contains(refused, "CONNECT management.azure.com:443") {
		t.Errorf("refused %v; want the unrouted host", refused)
	}
	if hosts := r.Hosts(); !slices.Equal(hosts, []string{"storage.googleapis.com", "acct.blob.example", "management.azure.com"}) {
		t.Errorf("hosts %v", hosts)
	}
}
