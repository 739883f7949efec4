// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// clouds are the Azure clouds by providerConfig name.
var clouds = map[string]cloud.Configuration{
	azureapi.CloudAzurePublic:     cloud.AzurePublic,
	azureapi.CloudAzureChina:      cloud.AzureChina,
	azureapi.CloudAzureGovernment: cloud.AzureGovernment,
}

// cloudFor is the stand-in's cloud in tests, else the configured cloud or the region's.
func (p *Provider) cloudFor(creds provider.Credentials, cfg *azureapi.BackupBucketConfig) cloud.Configuration {
	if p.Cloud != nil {
		return *p.Cloud
	}
	return clouds[cfg.CloudName(creds.Region)]
}

func (p *Provider) managementOptions(c cloud.Configuration) azcore.ClientOptions {
	o := azcore.ClientOptions{
		Cloud: c,
		Retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: 500 * time.Millisecond, MaxRetryDelay: 10 * time.Second},
	}
	next := p.ManagementTransport
	if next == nil {
		// Go's defaults with TLS 1.2 at least, as the Azure SDK's own default client has.
		next = &http.Client{Transport: httpclient.Default()}
	}
	// The management plane's and the token endpoint's requests (azidentity takes these options
	// too) are counted by the metrics transport.
	o.Transport = countedTransporter{metrics.Transport(Type, transporterRoundTrip{next})}
	return o
}

// transporterRoundTrip lets the metrics transport wrap an SDK transporter (ManagementTransport
// is one, not a round tripper).
type transporterRoundTrip struct{ next policy.Transporter }

func (t transporterRoundTrip) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.next.Do(req)
}

// countedTransporter is the SDK's transporter over the counting round tripper.
type countedTransporter struct{ rt http.RoundTripper }

func (t countedTransporter) Do(req *http.Request) (*http.Response, error) { return t.rt.RoundTrip(req) }

// managementCredential returns the subscription and token credential of a service principal or
// workload identity secret, or a nil credential for an account key secret. A secret holding keys
// of two modes is refused: which credentials were meant cannot be told, and the others would be
// silently ignored.
func (p *Provider) managementCredential(creds provider.Credentials, opts azcore.ClientOptions) (string, azcore.TokenCredential, error) {
	d := creds.Data
	accountKeys := present(d, KeyStorageAccount, KeyStorageKey)
	spKeys := present(d, servicePrincipalKeys...)
	if creds.WorkloadIdentity {
		if others := append(present(d, KeyClientSecret), present(d, KeyStorageKey)...); len(others) > 0 {
			return "", nil, fmt.Errorf("%w: a workload identity secret (keys %q and %q) also holds the secret keys %q of another mode: it is used with its token only; remove them",
				objectstore.ErrInvalidConfig, KeyWorkloadIdentityConfig, KeyWorkloadIdentityToken, others)
		}
		cfg, err := azureapi.DecodeWorkloadIdentityConfig(d[KeyWorkloadIdentityConfig])
		if err != nil {
			return "", nil, fmt.Errorf("secret key %q: %w", KeyWorkloadIdentityConfig, err)
		}
		token := strings.TrimSpace(string(d[KeyWorkloadIdentityToken]))
		if token == "" {
			return "", nil, objectstore.Invalidf("workload identity secret has no %q", KeyWorkloadIdentityToken)
		}
		cred, err := azidentity.NewClientAssertionCredential(cfg.TenantID, cfg.ClientID, func(context.Context) (string, error) { return token, nil },
			&azidentity.ClientAssertionCredentialOptions{ClientOptions: opts, DisableInstanceDiscovery: p.Cloud != nil})
		if err != nil {
			return "", nil, objectstore.Invalidf("workload identity (secret key %q): %w", KeyWorkloadIdentityConfig, err)
		}
		return cfg.SubscriptionID, refusedAs{cred, fmt.Sprintf("workload identity (secret keys %q and %q)", KeyWorkloadIdentityConfig, KeyWorkloadIdentityToken)}, nil
	}
	if len(spKeys) == 0 {
		return "", nil, nil
	}
	if len(accountKeys) > 0 {
		return "", nil, fmt.Errorf("%w: the secret holds both service principal keys %q and account key keys %q: use a service principal secret (%q) or an account key secret (%q and %q), not both",
			objectstore.ErrInvalidConfig, spKeys, accountKeys, servicePrincipalKeys, KeyStorageAccount, KeyStorageKey)
	}
	var missing []string
	for _, k := range servicePrincipalKeys {
		if len(d[k]) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return "", nil, fmt.Errorf("%w: a service principal secret needs the keys %q; missing %q", objectstore.ErrInvalidConfig,
			servicePrincipalKeys, missing)
	}
	cred, err := azidentity.NewClientSecretCredential(string(d[KeyTenantID]), string(d[KeyClientID]), string(d[KeyClientSecret]),
		&azidentity.ClientSecretCredentialOptions{ClientOptions: opts, DisableInstanceDiscovery: p.Cloud != nil})
	if err != nil {
		return "", nil, objectstore.Invalidf("service principal (secret keys %q and %q): %w", KeyTenantID, KeyClientID, err)
	}
	return string(d[KeySubscriptionID]), refusedAs{cred, fmt.Sprintf("service principal (secret keys %q, %q and %q)", KeyTenantID, KeyClientID, KeyClientSecret)}, nil
}

// refusedAs names the secret's keys when Microsoft Entra ID refuses a token (never their values),
// and says when it was not reached at all (no answer: nothing was refused).
type refusedAs struct {
	azcore.TokenCredential

	what string
}

func (r refusedAs) GetToken(ctx context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	tok, err := r.TokenCredential.GetToken(ctx, opts)
	var af *azidentity.AuthenticationFailedError
	switch {
	case err == nil:
		return tok, nil
	case errors.As(err, &af) && af.RawResponse == nil:
		return tok, fmt.Errorf("no token for the %s: Microsoft Entra ID was not reached or did not answer (network, proxy or TLS; a private CA of a non-public cloud is trusted with --%s): %w",
			r.what, FlagManagementCAFile, err)
	}
	return tok, fmt.Errorf("the %s was refused by Microsoft Entra ID: %w", r.what, err)
}

// serviceURL is the account's blob endpoint: https://<account>.<domain>/, or for an emulator
// http://<host:port>/<account>/ (path style, as Azurite serves it).
func (a account) serviceURL() string {
	if a.emulator {
		return fmt.Sprintf("http://%s/%s/", a.domain, a.name)
	}
	return fmt.Sprintf("https://%s.%s/", a.name, a.domain)
}

// NewClient builds the blob client of a store (the benchmarks build their baselines with it).
func (p *Provider) NewClient(creds provider.Credentials) (*azblob.Client, error) {
	a, err := parseAccount(creds.Data)
	if err != nil {
		return nil, err
	}
	return p.newClient(a)
}

func (p *Provider) newClient(a account) (*azblob.Client, error) {
	cred, err := azblob.NewSharedKeyCredential(a.name, a.key)
	if err != nil {
		return nil, objectstore.Invalidf("secret key %q is not a valid account key", KeyStorageKey)
	}
	// The deletion engine keeps several batches in flight to one host, over as many HTTP/1.1
	// connections (this transport never spoke HTTP/2).
	transport, err := httpclient.RoundTripper(httpclient.Options{
		Provider: Type, MaxIdleConnsPerHost: 256, StallTimeout: httpclient.Timeout(p.RequestTimeout), HTTP1: true,
	})
	if err != nil {
		return nil, err
	}
	return azblob.NewClientWithSharedKeyCredential(a.serviceURL(), cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: transport},
		// The SDK retries transient failures a few times; longer throttling reaches the deletion
		// engine, which slows down, and the controllers, which requeue.
		Retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: 200 * time.Millisecond, MaxRetryDelay: 5 * time.Second},
	}})
}

func newARMStore(sub string, cred azcore.TokenCredential, opts *arm.ClientOptions, region string, cfg *azureapi.BackupBucketConfig, newBlobs func(account) (*azblob.Client, error), pageSize int32) (*armStore, error) {
	factory, err := armstorage.NewClientFactory(sub, cred, opts)
	if err != nil {
		return nil, objectstore.Invalidf("%w", err)
	}
	resources, err := armresources.NewClientFactory(sub, cred, opts)
	if err != nil {
		return nil, objectstore.Invalidf("%w", err)
	}
	s := &armStore{
		subscription: sub,

		accounts:   factory.NewAccountsClient(),
		containers: factory.NewBlobContainersClient(),
		services:   factory.NewBlobServicesClient(),
		policies:   factory.NewManagementPoliciesClient(),
		groups:     resources.NewResourceGroupsClient(),
		resources:  resources.NewClient(),
		region:     region,
		config:     cfg,
		newBlobs:   newBlobs,

		reachedAccounts: map[string]blobAccount{},
	}
	s.blobs = &store{reach: s.reachAccount, pageSize: pageSize}
	return s, nil
}
