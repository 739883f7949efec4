// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package stack

import (
	"context"
	"crypto/x509"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
)

// redirectClient is a client that goes through r as a program with HTTPS_PROXY and SSL_CERT_FILE
// does.
func redirectClient(t *testing.T, r *Redirect) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(r.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("no CA in", r.CAFile)
	}
	proxy, _ := url.Parse(r.URL)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(proxy)
	tr.TLSClientConfig.RootCAs = roots
	return &http.Client{Transport: tr}
}

func TestRedirectServesRoutedHostsAndRefusesOthers(t *testing.T) {
	standIn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "stand-in "+r.Host+r.URL.Path) })
	r, err := StartRedirect(t.TempDir(), map[string]http.Handler{"storage.googleapis.com": standIn, ".blob.example": standIn})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := redirectClient(t, r)
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

func TestBlobStandInPlaysHostStyleAccountsOnTheStandInAccount(t *testing.T) {
	blobs := StartBlobStandIn()
	defer blobs.Close()
	r, err := StartRedirect(t.TempDir(), map[string]http.Handler{"." + AzureBlobDomain: blobs.HostStyle()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hc := redirectClient(t, r)
	ctx := context.Background()
	clientFor := func(account, key string) *azblob.Client {
		cred, err := azblob.NewSharedKeyCredential(account, key)
		if err != nil {
			t.Fatal(err)
		}
		c, err := azblob.NewClientWithSharedKeyCredential("https://"+account+"."+AzureBlobDomain+"/", cred, &azblob.ClientOptions{ClientOptions: policy.ClientOptions{Transport: hc}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// An account the ARM stand-in made (any name) with the keys it lists for it.
	c := clientFor("bkp0123456789abcde", StandInKeys[1])
	if _, err := c.CreateContainer(ctx, "bucket", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadBuffer(ctx, "bucket", "entry/Full-1", []byte("snapshot"), nil); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, req := range blobs.Requests() {
		got[req.Account+" "+req.Path] = true
	}
	if !got[StandInAccount+" /"+StandInAccount+"/bucket/entry/Full-1"] {
		t.Errorf("the upload was not served on the stand-in account: %v", got)
	}
	pager := c.NewListBlobsFlatPager("bucket", nil)
	page, err := pager.NextPage(ctx)
	if err != nil || len(page.Segment.BlobItems) != 1 || *page.Segment.BlobItems[0].Name != "entry/Full-1" {
		t.Fatalf("listing: %v, %v", page.Segment, err)
	}
	// A key the account does not have is refused as Azure refuses it.
	_, err = clientFor("bkp0123456789abcde", AzuriteKey).DeleteBlob(ctx, "bucket", "entry/Full-1", nil)
	if !bloberror.HasCode(err, bloberror.AuthenticationFailed) {
		t.Errorf("a wrong key: %v; want AuthenticationFailed", err)
	}
}
