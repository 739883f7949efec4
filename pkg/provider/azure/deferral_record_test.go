// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// standInKey is an account-key secret for the account the ARM stand-in hands out on blobs, as a
// migration's source- entry holds it (generated or the operator's).
func standInKey(blobs *azurestack.BlobStandIn) map[string][]byte {
	return map[string][]byte{"storageAccount": []byte(azurestack.StandInAccount), "storageKey": []byte(azurestack.StandInKeys[0]), "domain": []byte(blobs.Host()), "emulatorEnabled": []byte("true")}
}

func containerOn(t *testing.T, blobs *azurestack.BlobStandIn, name string) *container.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(azurestack.StandInAccount, azurestack.StandInKeys[0])
	if err != nil {
		t.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(blobs.StandInEndpoint(), cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.ServiceClient().NewContainerClient(name)
}

func metadata(t *testing.T, c *container.Client) map[string]string {
	t.Helper()
	p, err := c.GetProperties(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for k, v := range p.Metadata {
		m[strings.ToLower(k)] = *v
	}
	return m
}

func setMetadata(t *testing.T, c *container.Client, m map[string]string) {
	t.Helper()
	meta := map[string]*string{}
	for k, v := range m {
		meta[k] = to.Ptr(v)
	}
	if _, err := c.SetMetadata(ctx(t), &container.SetMetadataOptions{Metadata: meta}); err != nil {
		t.Fatal(err)
	}
}

// TestAccountKeyDeferralRestsOnTheBucketsRecord: an account key cannot read the management
// policy, so a deferral with the key alone is accepted only on the record that the bucket's
// reconcile (management plane) writes after reading the rule back; where the record is absent,
// removed or names another rule, nothing is tagged and nothing claimed (issue 25, finding 4).
func TestAccountKeyDeferralRestsOnTheBucketsRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		// change acts on the bucket after its first reconcile; it returns whether the
		// following (second) reconcile is expected to fail.
		change    func(t *testing.T, arm *azurestack.ARM, c *container.Client, bucket string) (reconcileFails bool)
		reconcile bool // reconcile the bucket again after change
		wantOK    bool
		wantWhy   string
	}{
		{name: "recorded by the bucket's reconcile", wantOK: true,
			change: func(*testing.T, *azurestack.ARM, *container.Client, string) bool { return false }},
		{name: "no record: a bucket made before the record existed", wantWhy: "carries no record",
			change: func(t *testing.T, _ *azurestack.ARM, c *container.Client, _ string) bool {
				setMetadata(t, c, map[string]string{"owner": "ops"})
				return false
			}},
		{name: "no record until the upgrade's reconcile writes it", reconcile: true, wantOK: true,
			change: func(t *testing.T, _ *azurestack.ARM, c *container.Client, _ string) bool {
				setMetadata(t, c, map[string]string{"owner": "ops"})
				return false
			}},
		{name: "a record naming another filter", wantWhy: "filter",
			change: func(t *testing.T, _ *azurestack.ARM, c *container.Client, _ string) bool {
				m := metadata(t, c)
				m["gardenerbackupdeferralfilter"] = "someone-else==true"
				setMetadata(t, c, m)
				return false
			}},
		{name: "the rule cannot be kept: the reconcile removes the record", reconcile: true, wantWhy: "carries no record",
			change: func(_ *testing.T, arm *azurestack.ARM, _ *container.Client, bucket string) bool {
				// Something between the extension and the account drops the action on versions
				// from every policy written (an Azure Policy, say).
				arm.RewriteLifecycle(func(p map[string]any) {
					for _, r := range p["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any) {
						delete(r.(map[string]any)["definition"].(map[string]any)["actions"].(map[string]any), "version")
					}
				})
				arm.SetLifecycle(azureprovider.AccountName(bucket), func(p map[string]any) {
					delete(p["properties"].(map[string]any)["policy"].(map[string]any)["rules"].([]any)[0].(map[string]any)["definition"].(map[string]any)["actions"].(map[string]any), "version")
				})
				return true
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arm, blobs, bucketStore, bucket := versionedBucket(t)
			c := containerOn(t, blobs, bucket)
			fails := tc.change(t, arm, c, bucket)
			if tc.reconcile {
				err := bucketStore.EnsureBucket(ctx(t), objectstore.Bucket{Name: bucket, Region: "westeurope"})
				if fails != (err != nil) {
					t.Fatalf("the bucket's reconcile: %v; want failing %v", err, fails)
				}
				if fails && (!errors.Is(err, objectstore.ErrUnsupported) || !strings.Contains(err.Error(), azureprovider.DeferredDeletionRule)) {
					t.Fatalf("the bucket's reconcile: %v; want ErrUnsupported naming the rule", err)
				}
			}
			entry := newStore(t, standInKey(blobs))
			prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
			res, err := objectstore.DeletePrefix(ctx(t), entry, bucket, prefix, objectstore.DeleteOptions{})
			if err != nil || !res.Done || res.Locked != 5 {
				t.Fatalf("DeletePrefix = %+v, %v; want done with 5 locked", res, err)
			}
			d, err := entry.DeferDeletion(ctx(t), bucket, prefix.String())
			marked := 0
			for _, tags := range blobs.Tags(azurestack.StandInAccount, bucket, "shoot--a--b--1/x") {
				if tags[azureprovider.DeferredDeletionTag] == "true" {
					marked++
				}
			}
			if !tc.wantOK {
				if !errors.Is(err, objectstore.ErrUnsupported) || !strings.Contains(err.Error(), tc.wantWhy) || !strings.Contains(err.Error(), "reconcile the BackupBucket") {
					t.Fatalf("DeferDeletion with the key: %v; want ErrUnsupported saying %q and what to do", err, tc.wantWhy)
				}
				if marked != 0 {
					t.Fatalf("%d versions of x tagged although no deferral was accepted", marked)
				}
				return
			}
			if err != nil {
				t.Fatalf("DeferDeletion with the key: %v", err)
			}
			if !strings.Contains(d.VerifiedBy, "the BackupBucket's reconcile at 20") || !strings.Contains(d.Rule, azureprovider.DeferredDeletionRule) || !strings.Contains(d.Rule, azurestack.StandInAccount) {
				t.Fatalf("Deferral %+v; want the rule, the account and who verified it when", d)
			}
			if marked != 4 { // the current blob, two previous versions, a snapshot
				t.Fatalf("%d versions and snapshots of x tagged; want 4", marked)
			}
			if got := metadata(t, c); tc.reconcile && got["owner"] != "ops" {
				t.Fatalf("container metadata %v after the reconcile; want the operator's kept", got)
			}
		})
	}
}
