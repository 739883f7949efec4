package incumbent_test

import (
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const azureRegion = "westeurope"

// azureConfig is the seed's providerConfig in provider-azure's form. Without immutability: its
// immutable buckets are behind its alpha feature gate EnableImmutableBuckets (off by default,
// pkg/features/features.go:30), so its deletions delete.
const azureConfig = `{"apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`

// azureWorld is the ARM stand-in (Entra ID and Resource Manager) with the blob stand-in as the
// data plane of every account it creates, for gardener-extension-provider-azure v1.62.1. Its
// clouds are fixed in its code (AzurePublic, AzureChina, AzureGovernment:
// pkg/azure/client/helper.go:118-134, storage.go:34-51), so it reaches the stand-ins through
// stack.Redirect: login.microsoftonline.com and management.azure.com are the ARM stand-in,
// <account>.blob.core.windows.net the blob stand-in (BlobStandIn.HostStyle). This extension
// reaches the ARM stand-in through its flags, as for a non-public cloud.
type azureWorld struct {
	arm      *stack.ARM
	blobs    *stack.BlobStandIn
	redirect *stack.Redirect
	flags    []string
}

func startAzure(t *testing.T, dir string) world {
	t.Helper()
	blobs := stack.StartBlobStandIn()
	t.Cleanup(blobs.Close)
	arm := stack.StartARM(blobs.StandInEndpoint())
	t.Cleanup(arm.Close)
	toARM, err := stack.ForwardTo(arm.URL, arm.Client().Transport)
	if err != nil {
		t.Fatal(err)
	}
	redirect, err := stack.StartRedirect(dir, map[string]http.Handler{
		"login.microsoftonline.com": toARM, "management.azure.com": toARM, "." + stack.AzureBlobDomain: blobs.HostStyle(),
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
func (w *azureWorld) defers() bool                  { return false }

// consumer: etcd-backup-restore reaches https://<storageAccount>.<domain> from the secret
// provider-azure generated (domain blob.core.windows.net) through the redirect, as on Azure.
func (w *azureWorld) consumer(*testing.T) stack.Consumer {
	return stack.Consumer{StorageProvider: "ABS", CredentialsEnv: "AZURE_APPLICATION_CREDENTIALS", Env: w.redirect.Env()}
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
}

// Nothing is deferred (the flow checks that a deleted entry's prefix is empty).
func (w *azureWorld) incumbentDeferred(*testing.T, string, string) {}
func (w *azureWorld) weDeferred(*testing.T, string, string)        {}
func (w *azureWorld) ended(*testing.T, string)                     {}

func (w *azureWorld) adopted(t *testing.T, bucket, _ string) {
	t.Helper()
	acct := w.arm.Account(azureprovider.IncumbentAccountName(bucket))
	tags, _ := acct["tags"].(map[string]any)
	if tags[azureprovider.TagAdoptedFrom] != azureprovider.AdoptedFromIncumbent {
		t.Fatalf("provider-azure's account after the takeover carries tags %v; want %s=%s", tags, azureprovider.TagAdoptedFrom, azureprovider.AdoptedFromIncumbent)
	}
}

func (w *azureWorld) handedBack(*testing.T, string) {}
