// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

func TestBlobStandInPlaysHostStyleAccountsOnTheStandInAccount(t *testing.T) {
	blobs := StartBlobStandIn()
	defer blobs.Close()
	r, err := stack.StartRedirect(t.TempDir(), map[string]http.Handler{"." + AzureBlobDomain: blobs.HostStyle()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hc := r.Client(t)
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
