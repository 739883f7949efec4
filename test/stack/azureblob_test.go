package stack_test

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// The blob stand-in is checked here with the real SDK against what Azure's documentation says,
// so that the provider's tests rest on a stand-in that is itself tested.

func blobClient(t *testing.T, b *stack.BlobStandIn, key string) *azblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(stack.AzuriteAccount, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(b.URL+"/"+stack.AzuriteAccount+"/", cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type item struct {
	name, version, snapshot string
	current                 bool
}

func list(t *testing.T, c *container.Client, pageSize int32) []item {
	t.Helper()
	var out []item
	pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: container.ListBlobsInclude{Versions: true, Snapshots: true}, MaxResults: to.Ptr(pageSize)})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Segment.BlobItems) > int(pageSize) {
			t.Fatalf("page of %d items; asked for at most %d", len(page.Segment.BlobItems), pageSize)
		}
		for _, it := range page.Segment.BlobItems {
			i := item{name: *it.Name}
			if it.VersionID != nil {
				i.version = *it.VersionID
			}
			if it.Snapshot != nil {
				i.snapshot = *it.Snapshot
			}
			i.current = it.IsCurrentVersion != nil && *it.IsCurrentVersion
			out = append(out, i)
		}
	}
	return out
}

func TestBlobStandInPlaysVersioningAndBatch(t *testing.T) {
	ctx := context.Background()
	b := stack.StartBlobStandIn()
	defer b.Close()

	wrong := blobClient(t, b, stack.StandInKeys[0])
	if _, err := wrong.CreateContainer(ctx, "c", nil); !bloberror.HasCode(err, bloberror.AuthenticationFailed) {
		t.Fatalf("a wrong key: %v; want 403 AuthenticationFailed", err)
	}
	client := blobClient(t, b, stack.AzuriteKey)
	if _, err := client.CreateContainer(ctx, "c", nil); err != nil {
		t.Fatal(err)
	}
	c := client.ServiceClient().NewContainerClient("c")
	put := func(name, data string) *string {
		t.Helper()
		res, err := c.NewBlockBlobClient(name).UploadBuffer(ctx, []byte(data), nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.VersionID
	}
	if v := put("a", "unversioned"); v != nil {
		t.Fatalf("a write without versioning returned version %q", *v)
	}
	b.SetVersioning(stack.AzuriteAccount, true)
	v1 := put("a", "one")
	v2 := put("a", "two")
	if v1 == nil || v2 == nil || *v1 >= *v2 {
		t.Fatalf("version IDs %v, %v; want increasing IDs in x-ms-version-id", v1, v2)
	}
	if _, err := c.NewBlobClient("a").Delete(ctx, nil); err != nil {
		t.Fatal(err)
	}
	got := list(t, c, 1)
	// The unversioned blob became a version when it was replaced; the deleted current one too.
	if len(got) != 3 || got[2].version != *v2 || got[2].current || got[1].version != *v1 {
		t.Fatalf("listing after delete with versioning on: %+v; want three previous versions, none current", got)
	}

	put("b", "current")
	bb, err := c.NewBatchBuilder()
	if err != nil {
		t.Fatal(err)
	}
	_ = bb.Delete("a", &container.BatchDeleteOptions{VersionID: v1})
	_ = bb.Delete("a", &container.BatchDeleteOptions{VersionID: to.Ptr("2001-01-01T00:00:00.0000000Z")})
	cur := list(t, c, 10)[3]
	_ = bb.Delete("b", &container.BatchDeleteOptions{VersionID: &cur.version})
	res, err := c.SubmitBatch(ctx, bb, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Responses) != 3 || res.Responses[0].Error != nil ||
		!bloberror.HasCode(res.Responses[1].Error, bloberror.BlobNotFound) ||
		!bloberror.HasCode(res.Responses[2].Error, bloberror.OperationNotAllowedOnRootBlob) {
		t.Fatalf("batch sub-responses %+v; want deleted, BlobNotFound, OperationNotAllowedOnRootBlob", res.Responses)
	}
	if got := list(t, c, 2); len(got) != 3 || got[0].version == *v1 {
		t.Fatalf("after the batch: %+v; want v1 of a gone, b's current version kept", got)
	}
}
