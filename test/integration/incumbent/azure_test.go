// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package incumbent_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

const azureRegion = "westeurope"

// azureConfig is the seed's providerConfig in provider-azure's form: a container immutability
// policy of a day, so that every blob is locked and every deletion is deferred. Its immutable
// buckets are behind its alpha feature gate EnableImmutableBuckets (off by default,
// pkg/features/features.go:30), which the incumbent runs with (azureGates).
const azureConfig = `{"apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h"}}`

// azureGates are the incumbent's feature gates, as an operator of immutable buckets sets them.
var azureGates = []string{"--feature-gates", "EnableImmutableBuckets=true"}

// azureWorld is the ARM stand-in (Entra ID and Resource Manager) with the blob stand-in as the
// data plane of every account it creates, for gardener-extension-provider-azure v1.62.1. Its
// clouds are fixed in its code (AzurePublic, AzureChina, AzureGovernment:
// pkg/azure/client/helper.go:118-134, storage.go:34-51), so it reaches the stand-ins through
// stack.Redirect: login.microsoftonline.com and management.azure.com are the ARM stand-in,
// <account>.blob.core.windows.net the blob stand-in (BlobStandIn.HostStyle). This extension
// reaches the ARM stand-in through its flags, as for a non-public cloud.
type azureWorld struct {
	arm      *azurestack.ARM
	blobs    *azurestack.BlobStandIn
	redirect *stack.Redirect
	flags    []string
}

func startAzure(t *testing.T, dir string) world {
	t.Helper()
	blobs := azurestack.StartBlobStandIn()
	t.Cleanup(blobs.Close)
	arm := azurestack.StartARM(blobs.StandInEndpoint())
	t.Cleanup(arm.Close)
	// A container immutability policy set through ARM locks the container on the blob stand-in:
	// deletes and overwrites are refused with 409 BlobImmutableDueToPolicy, as within its period.
	arm.EnforceImmutability(func(container string, locked bool) { blobs.LockContainer(azurestack.StandInAccount, container, locked) })
	// The ARM stand-in's handler itself, so that it sees the host the incumbent asked for (its
	// OpenID discovery answers on it: MSAL checks the issuer against the authority).
	toARM := arm.Config.Handler
	redirect, err := stack.StartRedirect(dir, map[string]http.Handler{
		"login.microsoftonline.com": toARM, "management.azure.com": toARM, "." + azurestack.AzureBlobDomain: blobs.HostStyle(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(redirect.Close)
	cloudFile, caFile := filepath.Join(dir, "azure-cloud.yaml"), filepath.Join(dir, "azure-management-ca.pem")
	cloud := "activeDirectoryAuthorityHost: " + arm.URL + "/\nresourceManager:\n  endpoint: " + arm.URL + "\n  audience: https://management.stand-in\n"
	if err := os.WriteFile(cloudFile, []byte(cloud), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: arm.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &azureWorld{arm: arm, blobs: blobs, redirect: redirect,
		flags: []string{"--" + azureprovider.FlagCloudConfig, cloudFile, "--" + azureprovider.FlagManagementCAFile, caFile}}
}

func (w *azureWorld) attach(k8s client.Client) *framework.Env {
	return framework.Attach(k8s, &azureprovider.Provider{Cloud: w.arm.Cloud(), ManagementTransport: w.arm.Client()}, azureRegion)
}

func (w *azureWorld) secretData() map[string][]byte { return w.arm.ServicePrincipal() }
func (w *azureWorld) incumbentConfig() string       { return azureConfig }
func (w *azureWorld) handBackConfig() string        { return withHandBack(azureConfig) }
func (w *azureWorld) incumbentEnv() []string        { return w.redirect.Env() }
func (w *azureWorld) extensionFlags() []string      { return w.flags }

// gap: this extension deletes an entry's blobs with Blob Batch, which BlobStandIn.HostStyle does
// not play (each sub-request carries its own host-style signature, which it would have to check
// and sign anew): the hand-back part of the flow waits for it.
func (w *azureWorld) gap() string {
	return "Blob Batch on <account>.blob.core.windows.net (BlobStandIn.HostStyle answers 400 InvalidUri)"
}

// extensionEnv: the generated secret provider-azure published names
// <account>.blob.core.windows.net, which this extension's entry reconcile probes with it.
func (w *azureWorld) extensionEnv() []string  { return w.redirect.Env() }
func (w *azureWorld) incumbentArgs() []string { return azureGates }
func (w *azureWorld) defers() bool            { return true }

// consumer: etcd-backup-restore reaches https://<storageAccount>.<domain> from the secret
// provider-azure generated (domain blob.core.windows.net) through the redirect, as on Azure.
func (w *azureWorld) consumer(*testing.T) stack.Consumer {
	return stack.Consumer{StorageProvider: "ABS", CredentialsEnv: "AZURE_APPLICATION_CREDENTIALS", Env: w.redirect.Env()}
}

// rules are the names of the rules of the account's management policy.
func (w *azureWorld) rules(bucket string) []string {
	var names []string
	policy, _ := w.arm.Lifecycle(azureprovider.IncumbentAccountName(bucket))["properties"].(map[string]any)
	inner, _ := policy["policy"].(map[string]any)
	rules, _ := inner["rules"].([]any)
	for _, r := range rules {
		if r, ok := r.(map[string]any); ok {
			names = append(names, fmt.Sprint(r["name"]))
		}
	}
	slices.Sort(names)
	return names
}

// blobClient reaches the stand-in account that backs every account of the ARM stand-in.
func (w *azureWorld) blobClient(t *testing.T) *azblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(azurestack.StandInAccount, azurestack.StandInKeys[0])
	if err != nil {
		t.Fatal(err)
	}
	c, err := azblob.NewClientWithSharedKeyCredential(w.blobs.StandInEndpoint(), cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// list lists the container on the blob stand-in, every version and snapshot: this extension's
// data plane with the operator's service principal refuses the incumbent's account until it
// adopted it (docs/azure.md).
func (w *azureWorld) list(t *testing.T, bucket, prefix string) []objectstore.ObjectVersion {
	t.Helper()
	var out []objectstore.ObjectVersion
	pager := w.blobClient(t).NewListBlobsFlatPager(bucket, &azblob.ListBlobsFlatOptions{Prefix: &prefix,
		Include: azblob.ListBlobsInclude{Versions: true, Snapshots: true}})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			v := objectstore.ObjectVersion{Key: *b.Name}
			switch {
			case b.Snapshot != nil && *b.Snapshot != "":
				v.Version, v.Noncurrent = "snapshot:"+*b.Snapshot, true
			case b.VersionID != nil:
				v.Version, v.Noncurrent = *b.VersionID, b.IsCurrentVersion == nil || !*b.IsCurrentVersion
			}
			out = append(out, v)
		}
	}
	return out
}

// tagged fails unless every blob under prefix (at least one), in every version and snapshot,
// carries each of tags = "true".
func (w *azureWorld) tagged(t *testing.T, bucket, prefix string, tags ...string) {
	t.Helper()
	n := 0
	pager := w.blobClient(t).NewListBlobsFlatPager(bucket, &azblob.ListBlobsFlatOptions{Prefix: &prefix})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			n++
			for which, got := range w.blobs.Tags(azurestack.StandInAccount, bucket, *b.Name) {
				for _, tag := range tags {
					if got[tag] != "true" {
						t.Errorf("locked blob %s (%s) carries tags %v; want %s=true", *b.Name, which, got, tag)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Errorf("no blob under %q: the lock held none", prefix)
	}
}

func (w *azureWorld) incumbentMadeBucket(t *testing.T, bucket, log string) {
	t.Helper()
	hosts := w.redirect.Hosts()
	if !slices.Contains(hosts, "login.microsoftonline.com") || !slices.Contains(hosts, "management.azure.com") || len(w.redirect.Refused()) > 0 {
		t.Fatalf("the incumbent reached %v through the redirect (refused %v)\n%s", hosts, w.redirect.Refused(), log)
	}
	acct := w.arm.Account(azureprovider.IncumbentAccountName(bucket))
	if acct == nil {
		t.Fatalf("no storage account %s (provider-azure's name for %s)\n%s", azureprovider.IncumbentAccountName(bucket), bucket, log)
	}
	if tags, _ := acct["tags"].(map[string]any); len(tags) > 0 {
		t.Fatalf("provider-azure's account carries tags %v; its code writes none", tags)
	}
	if w.arm.Container(azureprovider.IncumbentAccountName(bucket), bucket) == nil {
		t.Fatalf("no container %s in provider-azure's account", bucket)
	}
	if rules := w.rules(bucket); !slices.Equal(rules, []string{azureprovider.IncumbentRule}) {
		t.Fatalf("provider-azure's management policy has rules %v; want its %s", rules, azureprovider.IncumbentRule)
	}
}

// incumbentDeferred: the lock refused every delete, so the incumbent tagged the blobs.
func (w *azureWorld) incumbentDeferred(t *testing.T, bucket, entry string) {
	t.Helper()
	w.tagged(t, bucket, entry+"/", azureprovider.IncumbentTag)
}

// weDeferred: this extension's deferral carries both markers.
func (w *azureWorld) weDeferred(t *testing.T, bucket, entry string) {
	t.Helper()
	w.tagged(t, bucket, entry+"/", azureprovider.DeferredDeletionTag, azureprovider.IncumbentTag)
}

// ended: every blob left carries the incumbent's marker, and its rule is the policy's.
func (w *azureWorld) ended(t *testing.T, bucket string) {
	t.Helper()
	w.tagged(t, bucket, "", azureprovider.IncumbentTag)
	if rules := w.rules(bucket); !slices.Contains(rules, azureprovider.IncumbentRule) {
		t.Errorf("after the incumbent's deletions the management policy has rules %v; want its %s", rules, azureprovider.IncumbentRule)
	}
}

func (w *azureWorld) adopted(t *testing.T, bucket, _ string) {
	t.Helper()
	acct := w.arm.Account(azureprovider.IncumbentAccountName(bucket))
	tags, _ := acct["tags"].(map[string]any)
	if tags[azureprovider.TagAdoptedFrom] != azureprovider.AdoptedFromIncumbent {
		t.Fatalf("provider-azure's account after the takeover carries tags %v; want %s=%s", tags, azureprovider.TagAdoptedFrom, azureprovider.AdoptedFromIncumbent)
	}
	if rules := w.rules(bucket); !slices.Contains(rules, azureprovider.IncumbentRule) || !slices.Contains(rules, azureprovider.DeferredDeletionRule) {
		t.Fatalf("management policy after the takeover has rules %v; want the incumbent's %s kept beside %s", rules, azureprovider.IncumbentRule, azureprovider.DeferredDeletionRule)
	}
}

func (w *azureWorld) handedBack(t *testing.T, bucket string) {
	t.Helper()
	if rules := w.rules(bucket); !slices.Equal(rules, []string{azureprovider.IncumbentRule}) {
		t.Fatalf("management policy after the hand-back has rules %v; want exactly the incumbent's %s", rules, azureprovider.IncumbentRule)
	}
}
