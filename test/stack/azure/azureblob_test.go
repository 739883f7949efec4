// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azarm "github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// The blob stand-in is checked here with the real SDK against what Azure's documentation says,
// so that the provider's tests rest on a stand-in that is itself tested.

func blobClient(t *testing.T, b *azurestack.BlobStandIn, key string) *azblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(azurestack.AzuriteAccount, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(b.URL+"/"+azurestack.AzuriteAccount+"/", cred, nil)
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
	b := azurestack.StartBlobStandIn()
	defer b.Close()

	wrong := blobClient(t, b, azurestack.StandInKeys[0])
	if _, err := wrong.CreateContainer(ctx, "c", nil); !bloberror.HasCode(err, bloberror.AuthenticationFailed) {
		t.Fatalf("a wrong key: %v; want 403 AuthenticationFailed", err)
	}
	client := blobClient(t, b, azurestack.AzuriteKey)
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
	b.SetVersioning(azurestack.AzuriteAccount, true)
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

// TestBlobStandInPlaysStagedUploadsAndTheARMsLock: blocks staged and committed as the SDK's
// chunked uploads send them (etcd-backup-restore's way); an immutability policy set through the
// ARM stand-in refuses deletes and overwrites on the data plane, and its removal lifts that.
func TestBlobStandInPlaysStagedUploadsAndTheARMsLock(t *testing.T) {
	ctx := context.Background()
	b := azurestack.StartBlobStandIn()
	defer b.Close()
	client := blobClient(t, b, azurestack.AzuriteKey)
	if _, err := client.CreateContainer(ctx, "c", nil); err != nil {
		t.Fatal(err)
	}
	c := client.ServiceClient().NewContainerClient("c")
	bb := c.NewBlockBlobClient("snap")
	ids := []string{"YWFh", "YmJi", "Y2Nj"}
	for i, part := range []string{"one ", "two ", "three"} {
		if _, err := bb.StageBlock(ctx, ids[i], streaming.NopCloser(strings.NewReader(part)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bb.CommitBlockList(ctx, []string{ids[0], "ZGRk"}, nil); !bloberror.HasCode(err, bloberror.InvalidBlockList) {
		t.Fatalf("committing a block never staged: %v; want InvalidBlockList", err)
	}
	if _, err := bb.CommitBlockList(ctx, ids, nil); err != nil {
		t.Fatal(err)
	}
	res, err := c.NewBlobClient("snap").DownloadStream(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if string(data) != "one two three" {
		t.Fatalf("committed blob %q; want the staged blocks in the listed order", data)
	}

	// The ARM stand-in's policy, told to the blob stand-in (its accounts' data plane).
	arm := azurestack.StartARM(b.StandInEndpoint())
	defer arm.Close()
	locked := map[string]bool{}
	arm.EnforceImmutability(func(container string, on bool) {
		locked[container] = on
		b.LockContainer(azurestack.AzuriteAccount, container, on)
	})
	setPolicy(t, arm, "c", true)
	if !locked["c"] {
		t.Fatal("setting an immutability policy did not lock the container")
	}
	if _, err := c.NewBlobClient("snap").Delete(ctx, nil); !bloberror.HasCode(err, bloberror.BlobImmutableDueToPolicy) {
		t.Fatalf("deleting under the policy: %v; want BlobImmutableDueToPolicy", err)
	}
	if _, err := bb.UploadBuffer(ctx, []byte("over"), nil); !bloberror.HasCode(err, bloberror.BlobImmutableDueToPolicy) {
		t.Fatalf("overwriting under the policy: %v; want BlobImmutableDueToPolicy", err)
	}
	if _, err := c.NewBlockBlobClient("new").UploadBuffer(ctx, []byte("new"), nil); err != nil {
		t.Fatalf("writing a new blob under the policy: %v", err)
	}
	if _, err := c.NewBlobClient("snap").SetTags(ctx, map[string]string{"k": "v"}, nil); err != nil {
		t.Fatalf("tagging under the policy: %v", err)
	}
	setPolicy(t, arm, "c", false)
	if _, err := c.NewBlobClient("snap").Delete(ctx, nil); err != nil {
		t.Fatalf("deleting after the policy's removal: %v", err)
	}
}

// setPolicy sets (a day) or deletes the immutability policy of container c through the ARM
// stand-in's REST API, with a service principal token, as armstorage does.
func setPolicy(t *testing.T, arm *azurestack.ARM, c string, on bool) {
	t.Helper()
	arm.PutGroup("g", "westeurope", nil)
	arm.PutAccount("g", "acct", "westeurope", nil)
	if arm.Container("acct", c) == nil {
		arm.PutContainer("acct", c)
	}
	cred, err := azidentity.NewClientSecretCredential(arm.TenantID, arm.ClientID, arm.ClientSecret, &azidentity.ClientSecretCredentialOptions{
		ClientOptions: azcore.ClientOptions{Cloud: *arm.Cloud(), Transport: arm.Client()}, DisableInstanceDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	containers, err := armstorage.NewBlobContainersClient(arm.SubscriptionID, cred, &azarm.ClientOptions{ClientOptions: azcore.ClientOptions{Cloud: *arm.Cloud(), Transport: arm.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if on {
		_, err = containers.CreateOrUpdateImmutabilityPolicy(ctx, "g", "acct", c, &armstorage.BlobContainersClientCreateOrUpdateImmutabilityPolicyOptions{
			Parameters: &armstorage.ImmutabilityPolicy{Properties: &armstorage.ImmutabilityPolicyProperty{ImmutabilityPeriodSinceCreationInDays: to.Ptr[int32](1)}}})
	} else {
		var got armstorage.BlobContainersClientGetImmutabilityPolicyResponse
		if got, err = containers.GetImmutabilityPolicy(ctx, "g", "acct", c, nil); err == nil {
			_, err = containers.DeleteImmutabilityPolicy(ctx, "g", "acct", c, *got.Etag, nil)
		}
	}
	if err != nil {
		t.Fatalf("immutability policy on %s (set %v) through the ARM stand-in: %v", c, on, err)
	}
}
