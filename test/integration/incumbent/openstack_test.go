// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package incumbent_test

import (
	"context"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	openstackstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/openstack"
)

const osRegion = "RegionOne"

// osHandBack is handBack: true in the apiVersion of provider-openstack's providerConfig, which it
// has none of for backups: the incumbent's own form is no providerConfig.
const osHandBack = `{"apiVersion":"openstack.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","handBack":true}`

// osWorld is Keystone and Swift (hack/openstack.sh) for gardener-extension-provider-openstack
// v1.57.0, which reaches them as in any cloud: Keystone's URL is the secret's authURL, Swift's
// endpoint comes from the catalog (pkg/openstack/client/swift.go:27). Swift has no object lock:
// every deletion removes the objects.
type osWorld struct {
	os *openstackstack.OpenStack
}

func startOpenStack(t *testing.T, _ string) world {
	t.Helper()
	o, err := openstackstack.StartOpenStack(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Stop)
	return &osWorld{os: o}
}

func (w *osWorld) attach(k8s client.Client) *framework.Env {
	return framework.Attach(k8s, &osprovider.Provider{}, osRegion)
}

func (w *osWorld) secretData() map[string][]byte      { return w.os.SecretData("demo") }
func (w *osWorld) incumbentConfig() string            { return "" }
func (w *osWorld) handBackConfig() string             { return osHandBack }
func (w *osWorld) incumbentEnv() []string             { return nil }
func (w *osWorld) extensionFlags() []string           { return nil }
func (w *osWorld) incumbentArgs() []string            { return nil }
func (w *osWorld) defers() bool                       { return false }
func (w *osWorld) consumer(*testing.T) stack.Consumer { return openstackstack.SwiftConsumer }

// Nothing is deferred (the flow checks that a deleted entry's prefix is empty); the incumbent
// has no lifecycle.
func (w *osWorld) incumbentDeferred(*testing.T, string, string) {}
func (w *osWorld) weDeferred(*testing.T, string, string)        {}
func (w *osWorld) ended(*testing.T, string)                     {}

// head reads the container's headers and metadata as the demo user.
func (w *osWorld) head(t *testing.T, bucket string) (*containers.GetHeader, map[string]string) {
	t.Helper()
	ctx := context.Background()
	data := w.secretData()
	pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: string(data["authURL"]), Username: string(data["username"]),
		Password: string(data["password"]), DomainName: string(data["domainName"]), TenantName: string(data["tenantName"])})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := openstack.NewObjectStorageV1(pc, gophercloud.EndpointOpts{Region: osRegion})
	if err != nil {
		t.Fatal(err)
	}
	res := containers.Get(ctx, sc, bucket, nil)
	h, err := res.Extract()
	if err != nil {
		t.Fatal(err)
	}
	md, err := res.ExtractMetadata()
	if err != nil {
		t.Fatal(err)
	}
	return h, md
}

func (w *osWorld) incumbentMadeBucket(t *testing.T, bucket, log string) {
	t.Helper()
	if _, md := w.head(t, bucket); len(md) != 0 {
		t.Fatalf("the incumbent's container carries metadata %v; its code writes none\n%s", md, log)
	}
}

func (w *osWorld) adopted(t *testing.T, bucket, _ string) {
	t.Helper()
	if _, md := w.head(t, bucket); md[osprovider.MetaBucket] != bucket || md[osprovider.MetaAdoptedFrom] != osprovider.AdoptedFromProviderOpenStack {
		t.Fatalf("metadata after the takeover %v; want %s=%s and %s=%s", md, osprovider.MetaBucket, bucket, osprovider.MetaAdoptedFrom, osprovider.AdoptedFromProviderOpenStack)
	}
}

func (w *osWorld) handedBack(t *testing.T, bucket string) {
	t.Helper()
	if h, _ := w.head(t, bucket); h.VersionsEnabled || h.VersionsLocation != "" || len(h.Read) > 0 || len(h.Write) > 0 {
		t.Fatalf("after the hand-back the container has versioning %t (location %q), ACLs %v / %v; provider-openstack's has none", h.VersionsEnabled, h.VersionsLocation, h.Read, h.Write)
	}
}
