// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// versionedBucket is a bucket made through the ARM stand-in whose data plane is the blob
// stand-in with versioning on: the entry "shoot--a--b--1/" holds a blob with two previous
// versions and a snapshot, a blob written once with a tag of its own, and a neighbour entry; the
// container is locked (immutability) so that nothing can be deleted.
func versionedBucket(t *testing.T) (*azurestack.ARM, *azurestack.BlobStandIn, conformance.Stores, string) {
	t.Helper()
	blobs := azurestack.StartBlobStandIn()
	t.Cleanup(blobs.Close)
	arm := azurestack.StartARM(blobs.StandInEndpoint())
	t.Cleanup(arm.Close)
	s := armStore(t, arm, arm.ServicePrincipal(), false)
	name := newBucketName()
	if err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"}); err != nil {
		t.Fatal(err)
	}
	blobs.SetVersioning(azurestack.StandInAccount, true)
	cred, err := azblob.NewSharedKeyCredential(azurestack.StandInAccount, azurestack.StandInKeys[0])
	if err != nil {
		t.Fatal(err)
	}
	direct, err := azblob.NewClientWithSharedKeyCredential(blobs.StandInEndpoint(), cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := direct.ServiceClient().NewContainerClient(name)
	for _, k := range []string{"shoot--a--b--1/x", "shoot--a--b--1/x", "shoot--a--b--1/x", "shoot--a--b--1/y", "shoot--a--b--10/z"} {
		if _, err := c.NewBlockBlobClient(k).UploadBuffer(ctx(t), []byte("v"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.NewBlobClient("shoot--a--b--1/x").CreateSnapshot(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewBlobClient("shoot--a--b--1/y").SetTags(ctx(t), map[string]string{"owner": "etcd"}, nil); err != nil {
		t.Fatal(err)
	}
	blobs.LockContainer(azurestack.StandInAccount, name, true)
	return arm, blobs, s, name
}

func TestDeferDeletionVerifiesTheRuleAndMarksEveryVersionAndSnapshot(t *testing.T) {
	arm, blobs, s, name := versionedBucket(t)
	account := azureprovider.AccountName(name)
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx(t), s, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Locked != 5 {
		t.Fatalf("DeletePrefix on a locked container = %+v, %v; want done with the 5 versions and snapshots locked", res, err)
	}
	// The rule drifted since the bucket was made: disabled by somebody.
	arm.SetLifecycle(account, func(p map[string]any) {
		p["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any)[0].(map[string]any)["enabled"] = false
	})
	for range 2 { // idempotent; the second pass finds everything marked
		d, err := s.DeferDeletion(ctx(t), name, prefix.String())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(d.Rule, azureprovider.DeferredDeletionRule) || !strings.Contains(d.Rule, account) {
			t.Fatalf("Deferral.Rule %q; want the rule and the account named", d.Rule)
		}
	}
	rule := arm.Lifecycle(account)["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any)[0].(map[string]any)
	actions := rule["definition"].(map[string]any)["actions"].(map[string]any)
	if rule["enabled"] != true || actions["version"] == nil || actions["snapshot"] == nil || actions["baseBlob"] == nil {
		t.Fatalf("rule after DeferDeletion: %v; want it enabled, deleting base blobs, versions and snapshots", rule)
	}
	marked := 0
	for _, key := range []string{"shoot--a--b--1/x", "shoot--a--b--1/y"} {
		for which, tags := range blobs.Tags(azurestack.StandInAccount, name, key) {
			if tags[azureprovider.DeferredDeletionTag] != "true" {
				t.Errorf("%s %s has tags %v; want %s=true", key, which, tags, azureprovider.DeferredDeletionTag)
			}
			marked++
		}
	}
	if marked != 5 {
		t.Errorf("%d versions and snapshots under the entry carry tags; want 5", marked)
	}
	if y := blobs.Tags(azurestack.StandInAccount, name, "shoot--a--b--1/y")["current"]; !maps.Equal(y, map[string]string{"owner": "etcd", azureprovider.DeferredDeletionTag: "true", azureprovider.IncumbentTag: "true"}) {
		t.Errorf("tags of y %v; want its own tag kept beside the mark", y)
	}
	for which, tags := range blobs.Tags(azurestack.StandInAccount, name, "shoot--a--b--10/z") {
		if len(tags) != 0 {
			t.Errorf("the neighbour's %s was marked: %v", which, tags)
		}
	}
}

func TestDeferDeletionIsNotReportedWhenTheRuleDoesNotReadBackAsWritten(t *testing.T) {
	arm, blobs, s, name := versionedBucket(t)
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	// Something between the extension and the account (an Azure Policy, say) drops the rule's
	// action on versions from every policy written.
	arm.RewriteLifecycle(func(p map[string]any) {
		for _, r := range p["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any) {
			delete(r.(map[string]any)["definition"].(map[string]any)["actions"].(map[string]any), "version")
		}
	})
	arm.SetLifecycle(azureprovider.AccountName(name), func(p map[string]any) {
		delete(p["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any)[0].(map[string]any)["definition"].(map[string]any)["actions"].(map[string]any), "version")
	})
	_, err := s.DeferDeletion(ctx(t), name, prefix.String())
	if !errors.Is(err, objectstore.ErrUnsupported) || !strings.Contains(err.Error(), azureprovider.DeferredDeletionRule) || !strings.Contains(err.Error(), "version") {
		t.Fatalf("DeferDeletion with a rule that does not cover versions: %v; want ErrUnsupported naming the rule and what is missing", err)
	}
	for which, tags := range blobs.Tags(azurestack.StandInAccount, name, "shoot--a--b--1/x") {
		if len(tags) != 0 {
			t.Errorf("%s was marked although the deferral is not in place: %v", which, tags)
		}
	}
}

// TestDeferDeletionWithAnAccountKeyIsUnsupported: an account key cannot read the account's
// lifecycle management policy, so the store cannot verify a deferral and does not claim one,
// whatever the secret says; nothing is marked.
func TestDeferDeletionWithAnAccountKeyIsUnsupported(t *testing.T) {
	bucket := newBucketName()
	plain := newStore(t, azurite.SecretData())
	if err := plain.EnsureBucket(ctx(t), objectstore.Bucket{Name: bucket}); err != nil {
		t.Fatal(err)
	}
	if err := plain.PutObject(ctx(t), bucket, "shoot--a--b--1/x", []byte("v")); err != nil {
		t.Fatal(err)
	}
	for _, data := range []map[string][]byte{azurite.SecretData(), with(azurite.SecretData(), "lifecycleDeferral", "true")} {
		if _, err := newStore(t, data).DeferDeletion(ctx(t), bucket, "shoot--a--b--1/"); !errors.Is(err, objectstore.ErrUnsupported) ||
			!strings.Contains(err.Error(), "service principal or workload identity") {
			t.Fatalf("DeferDeletion with an account key: %v; want ErrUnsupported saying which credentials can", err)
		}
	}
	client, err := (&azureprovider.Provider{}).NewClient(providerCreds(azurite.SecretData()))
	if err != nil {
		t.Fatal(err)
	}
	tags, err := client.ServiceClient().NewContainerClient(bucket).NewBlobClient("shoot--a--b--1/x").GetTags(ctx(t), nil)
	if err != nil || len(tags.BlobTagSet) != 0 {
		t.Fatalf("tags %v, %v; want none", tags.BlobTagSet, err)
	}
}
