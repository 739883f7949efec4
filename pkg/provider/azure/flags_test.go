// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/spf13/pflag"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCloudConfigFile: the file of --azure-cloud-config is read strictly; a file that cannot be
// used fails the start-up with a message naming the flag, the file and what is wrong.
func TestCloudConfigFile(t *testing.T) {
	for _, c := range []struct {
		name, content string
		want          *cloud.Configuration
		wantErr       []string
	}{
		{name: "yaml", content: "activeDirectoryAuthorityHost: https://login.microsoftonline.us\nresourceManager:\n  endpoint: https://management.usgovcloudapi.net/\n  audience: https://management.core.usgovcloudapi.net\n",
			want: &cloud.Configuration{ActiveDirectoryAuthorityHost: "https://login.microsoftonline.us/", Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
				cloud.ResourceManager: {Endpoint: "https://management.usgovcloudapi.net", Audience: "https://management.core.usgovcloudapi.net"}}}},
		{name: "json (Azure Stack Hub with AD FS)", content: `{"activeDirectoryAuthorityHost":"https://adfs.local.azurestack.external/","resourceManager":{"endpoint":"https://management.local.azurestack.external","audience":"https://management.adfs.azurestack.local/abc"}}`,
			want: &cloud.Configuration{ActiveDirectoryAuthorityHost: "https://adfs.local.azurestack.external/", Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
				cloud.ResourceManager: {Endpoint: "https://management.local.azurestack.external", Audience: "https://management.adfs.azurestack.local/abc"}}}},
		{name: "unknown key", content: "activeDirectoryAuthorityHost: https://a/\nresourceManager: {endpoint: https://m, audience: x}\nstorageEndpointSuffix: core.x\n",
			wantErr: []string{"--azure-cloud-config", "not a cloud configuration", "storageEndpointSuffix"}},
		{name: "not yaml", content: "{{{", wantErr: []string{"--azure-cloud-config", "not a cloud configuration"}},
		{name: "empty", content: "", wantErr: []string{"activeDirectoryAuthorityHost is empty", "resourceManager.endpoint is empty", "resourceManager.audience is empty"}},
		{name: "plain http", content: "activeDirectoryAuthorityHost: http://login.local/\nresourceManager: {endpoint: 'https://m.local', audience: x}\n",
			wantErr: []string{`activeDirectoryAuthorityHost "http://login.local/" is not an absolute https URL`}},
		{name: "relative endpoint", content: "activeDirectoryAuthorityHost: https://login.local/\nresourceManager: {endpoint: management.local, audience: x}\n",
			wantErr: []string{`resourceManager.endpoint "management.local" is not an absolute https URL`}},
		{name: "query", content: "activeDirectoryAuthorityHost: https://login.local/?x=1\nresourceManager: {endpoint: 'https://m.local', audience: x}\n",
			wantErr: []string{"has a query"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "cloud.yaml", c.content)
			got, err := azureprovider.ReadCloudConfig(path)
			if len(c.wantErr) > 0 {
				if !errors.Is(err, azureprovider.ErrCloudFlags) {
					t.Fatalf("error %v; want an ErrCloudFlags error", err)
				}
				for _, w := range append(c.wantErr, path) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ActiveDirectoryAuthorityHost != c.want.ActiveDirectoryAuthorityHost || got.Services[cloud.ResourceManager] != c.want.Services[cloud.ResourceManager] || len(got.Services) != 1 {
				t.Errorf("got %+v; want %+v", got, c.want)
			}
		})
	}
}

// TestCloudFlagsAtStartUp: the flags as the binary parses them; a missing or unusable file is
// refused before anything starts, and unset flags leave the provider as it was.
func TestCloudFlagsAtStartUp(t *testing.T) {
	good := writeFile(t, "cloud.json", `{"activeDirectoryAuthorityHost":"https://login.local/","resourceManager":{"endpoint":"https://m.local","audience":"https://m.local"}}`)
	notPEM := writeFile(t, "ca.pem", "not a certificate")
	for _, c := range []struct {
		name    string
		args    []string
		wantErr string // "" : no error
		cloud   bool
		ca      bool
	}{
		{name: "none"},
		{name: "cloud config", args: []string{"--azure-cloud-config", good}, cloud: true},
		{name: "missing cloud config", args: []string{"--azure-cloud-config", filepath.Join(t.TempDir(), "nope.yaml")}, wantErr: "--azure-cloud-config: open "},
		{name: "missing CA file", args: []string{"--azure-management-ca-file", filepath.Join(t.TempDir(), "nope.pem")}, wantErr: "--azure-management-ca-file: open "},
		{name: "CA file without a certificate", args: []string{"--azure-management-ca-file", notPEM}, wantErr: "holds no PEM certificate that can be parsed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &azureprovider.Provider{}
			f := p.Flags()
			fs := pflag.NewFlagSet("azure", pflag.ContinueOnError)
			f.AddFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			err := f.Complete()
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatal(err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, azureprovider.ErrCloudFlags)):
				t.Fatalf("error %v; want an ErrCloudFlags error saying %q", err, c.wantErr)
			}
			if (p.Cloud != nil) != c.cloud || (p.ManagementTransport != nil) != c.ca {
				t.Errorf("Cloud set %v, ManagementTransport set %v; want %v, %v", p.Cloud != nil, p.ManagementTransport != nil, c.cloud, c.ca)
			}
		})
	}
}

// TestCloudFlagsReachTheManagementPlane: a service principal reaches the ARM stand-in (a TLS
// server with its own certificate, playing Entra ID and Resource Manager) through the two files
// alone; without the CA file the certificate is not trusted and nothing is reached.
func TestCloudFlagsReachTheManagementPlane(t *testing.T) {
	blobs := azurestack.StartBlobStandIn()
	t.Cleanup(blobs.Close)
	arm := azurestack.StartARM(blobs.StandInEndpoint())
	t.Cleanup(arm.Close)
	cloudFile := writeFile(t, "cloud.yaml", "activeDirectoryAuthorityHost: "+arm.URL+"\nresourceManager:\n  endpoint: "+arm.URL+"\n  audience: https://management.stand-in\n")
	caFile := writeFile(t, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: arm.Certificate().Raw})))

	for _, c := range []struct {
		name string
		opts azureprovider.CloudOptions
		ok   bool
	}{
		{"cloud config and CA file", azureprovider.CloudOptions{CloudConfigFile: cloudFile, ManagementCAFile: caFile}, true},
		{"cloud config without the CA file", azureprovider.CloudOptions{CloudConfigFile: cloudFile}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &azureprovider.Provider{}
			if err := c.opts.Apply(p); err != nil {
				t.Fatal(err)
			}
			s := newStoreWith(t, p, arm.ServicePrincipal())
			name := newBucketName()
			err := s.EnsureBucket(ctx(t), objectstore.Bucket{Name: name, Region: "westeurope"})
			if c.ok {
				if err != nil {
					t.Fatalf("EnsureBucket through the flags' cloud: %v", err)
				}
				if arm.Container(azureprovider.AccountName(name), name) == nil {
					t.Errorf("the ARM stand-in has no container %s after EnsureBucket", name)
				}
				return
			}
			// Nothing refused the service principal: Entra ID was not reached.
			if err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), "was not reached") || errors.Is(err, objectstore.ErrUnauthenticated) {
				t.Fatalf("EnsureBucket without the CA file: %v; want a certificate error saying Entra ID was not reached, not unauthenticated", err)
			}
			t.Logf("without the CA file: %v", err)
		})
	}
}

// TestCloudConfigFileRefusesADeclaredCloud: with the binary's cloud set, a bucket that names a
// cloud in its providerConfig is refused (the name would silently not be applied), naming the
// field and the flag; an account key bucket is not concerned (its domain decides).
func TestCloudConfigFileRefusesADeclaredCloud(t *testing.T) {
	cloudFile := writeFile(t, "cloud.yaml", "activeDirectoryAuthorityHost: https://login.local/\nresourceManager: {endpoint: 'https://m.local', audience: x}\n")
	p := &azureprovider.Provider{}
	if err := (&azureprovider.CloudOptions{CloudConfigFile: cloudFile}).Apply(p); err != nil {
		t.Fatal(err)
	}
	cfg := &azureapi.BackupBucketConfig{CloudConfiguration: &azureapi.CloudConfiguration{Name: azureapi.CloudAzureChina}}
	sp := map[string][]byte{"tenantID": []byte("t"), "clientID": []byte("c"), "clientSecret": []byte("s"), "subscriptionID": []byte("sub")}
	_, err := p.NewManagement(context.Background(), provider.Credentials{Data: sp, Region: "chinanorth"}, cfg)
	if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "spec.providerConfig.cloudConfiguration.name") || !strings.Contains(err.Error(), "--azure-cloud-config") {
		t.Fatalf("NewManagement with a declared cloud and the binary's cloud: %v; want ErrInvalidConfig naming the field and the flag", err)
	}
	if _, err := p.NewManagement(context.Background(), provider.Credentials{Data: sp, Region: "westeurope"}, &azureapi.BackupBucketConfig{}); err != nil {
		t.Fatalf("NewManagement without a declared cloud: %v", err)
	}
	if _, err := p.NewManagement(context.Background(), provider.Credentials{Data: azurite.SecretData(), Region: "westeurope"}, &azureapi.BackupBucketConfig{CloudConfiguration: &azureapi.CloudConfiguration{Name: azureapi.CloudAzurePublic}}); err != nil {
		t.Fatalf("NewManagement of an account key secret with a declared cloud: %v", err)
	}
}
