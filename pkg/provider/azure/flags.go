// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// Flags of the azure binary (cmd/gardener-extension-backup-azure) beside the common ones.
const (
	FlagCloudConfig      = "azure-cloud-config"
	FlagManagementCAFile = "azure-management-ca-file"
)

// ErrCloudFlags is the class of every start-up error of the azure flags: the binary does not
// start, and the message names the flag and the file (never a value read from it).
var ErrCloudFlags = errors.New("azure flags")

// CloudConfig is the file --azure-cloud-config names (YAML or JSON, strictly decoded): the
// endpoints of an Azure cloud that is not one of the three providerConfig can name (Azure Stack
// Hub, a sovereign or air-gapped cloud). Both are https URLs.
type CloudConfig struct {
	// ActiveDirectoryAuthorityHost is the authority of Microsoft Entra ID (or AD FS) that issues
	// the management plane's tokens, e.g. "https://login.microsoftonline.us/".
	ActiveDirectoryAuthorityHost string `json:"activeDirectoryAuthorityHost"`
	// ResourceManager is Azure Resource Manager's endpoint and the audience its tokens are for.
	ResourceManager CloudService `json:"resourceManager"`
}

// CloudService is one service of a cloud: where it answers and the audience of its tokens.
type CloudService struct {
	Endpoint string `json:"endpoint"`
	Audience string `json:"audience"`
}

// CloudOptions are the azure binary's own flags: the files they name. Apply, at start-up, reads
// them into a Provider. Unset flags leave the Provider as it is: the cloud then comes from each
// bucket's providerConfig or region, and the management plane is trusted by the system's roots.
type CloudOptions struct {
	CloudConfigFile  string
	ManagementCAFile string
}

// Flags implements provider.Cloud: --azure-cloud-config and --azure-management-ca-file, read
// into p when the command completes its options.
func (p *Provider) Flags() provider.Flags { return &cloudFlags{p: p} }

// cloudFlags are the CloudOptions as flags, applied to the Provider that returned them.
type cloudFlags struct {
	CloudOptions

	p *Provider
}

func (f *cloudFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.CloudConfigFile, FlagCloudConfig, "", "File (YAML or JSON) with the endpoints of an Azure cloud that providerConfig's cloudConfiguration cannot name "+
		"(Azure Stack Hub, a sovereign cloud): activeDirectoryAuthorityHost and resourceManager.endpoint and .audience. When set, every bucket's management plane "+
		"(service principal or workload identity) uses this cloud, whatever its providerConfig or region says. Empty: Azure's public, China or Government cloud as providerConfig or the region says.")
	fs.StringVar(&f.ManagementCAFile, FlagManagementCAFile, "", "PEM file of CA certificates trusted, besides the system's roots, for the management plane's "+
		"and the token endpoint's TLS (Azure Resource Manager, Microsoft Entra ID or AD FS); not for the blob data plane. Empty: the system's roots only.")
}

func (f *cloudFlags) Complete() error { return f.Apply(f.p) }

// Apply reads the flags' files into p (its Cloud and ManagementTransport). An unreadable or
// invalid file is an ErrCloudFlags error that names the flag and the file.
func (o *CloudOptions) Apply(p *Provider) error {
	if o.CloudConfigFile != "" {
		c, err := ReadCloudConfig(o.CloudConfigFile)
		if err != nil {
			return err
		}
		p.Cloud = c
	}
	if o.ManagementCAFile != "" {
		t, err := managementTransport(o.ManagementCAFile)
		if err != nil {
			return err
		}
		p.ManagementTransport = t
	}
	return nil
}

// ReadCloudConfig reads and checks the file of --azure-cloud-config.
func ReadCloudConfig(path string) (*cloud.Configuration, error) {
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("%w: --%s: %w", ErrCloudFlags, FlagCloudConfig, err)
	}
	var c CloudConfig
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("%w: --%s %s: not a cloud configuration (keys activeDirectoryAuthorityHost, resourceManager.endpoint, resourceManager.audience): %w",
			ErrCloudFlags, FlagCloudConfig, path, err)
	}
	var problems []string
	for _, f := range []struct{ key, value string }{
		{"activeDirectoryAuthorityHost", c.ActiveDirectoryAuthorityHost},
		{"resourceManager.endpoint", c.ResourceManager.Endpoint},
	} {
		if why := httpsURLProblem(f.value); why != "" {
			problems = append(problems, f.key+" "+why)
		}
	}
	if strings.TrimSpace(c.ResourceManager.Audience) == "" {
		problems = append(problems, "resourceManager.audience is empty")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: --%s %s: %s", ErrCloudFlags, FlagCloudConfig, path, strings.Join(problems, "; "))
	}
	authority := c.ActiveDirectoryAuthorityHost
	if !strings.HasSuffix(authority, "/") {
		authority += "/" // azidentity appends the tenant to the host as given
	}
	return &cloud.Configuration{
		ActiveDirectoryAuthorityHost: authority,
		Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Endpoint: strings.TrimSuffix(c.ResourceManager.Endpoint, "/"), Audience: c.ResourceManager.Audience},
		},
	}, nil
}

// httpsURLProblem says what is wrong with an endpoint that must be an absolute https URL ("" if
// nothing): the SDK sends bearer tokens and client secrets over https only.
func httpsURLProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a URL", s)
	case u.Scheme != "https" || u.Host == "":
		return fmt.Sprintf("%q is not an absolute https URL", s)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Sprintf("%q has a query, fragment or user info", s)
	}
	return ""
}

// managementTransport is Go's default transport, TLS 1.2 at least, trusting the file's CA
// certificates besides the system's roots.
func managementTransport(path string) (*http.Client, error) {
	pem, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("%w: --%s: %w", ErrCloudFlags, FlagManagementCAFile, err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: --%s %s holds no PEM certificate that can be parsed", ErrCloudFlags, FlagManagementCAFile, path)
	}
	t, err := httpclient.Transport(httpclient.Options{CA: string(pem), CAKey: FlagManagementCAFile})
	if err != nil {
		return nil, fmt.Errorf("%w: --%s %s: %w", ErrCloudFlags, FlagManagementCAFile, path, err)
	}
	return &http.Client{Transport: t}, nil
}
