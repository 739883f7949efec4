// Package azure is the Azure Blob Storage provider: storage accounts' blob containers through
// azblob, behind the core's objectstore.Store.
package azure

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// Type is the extension type this provider serves.
const Type = "azure"

// Secret data keys: the names etcd-backup-restore reads, so that they reach etcd-backup unchanged.
const (
	KeyStorageAccount  = "storageAccount"
	KeyStorageKey      = "storageKey"
	KeyDomain          = "domain"
	KeyEmulatorEnabled = "emulatorEnabled"
	KeyBucketName      = "bucketName"
	// KeyLifecycleDeferral ("true") was written into generated secrets by earlier versions to
	// mark an account with the deferred-deletion lifecycle rule. It is ignored now: an account
	// key cannot read the rule back, so a deferral is never taken on the secret's word. It is not
	// passed on to etcd-backup.
	KeyLifecycleDeferral = "lifecycleDeferral"
)

// DefaultDomain is the blob endpoint domain of Azure's public cloud.
const DefaultDomain = "blob.core.windows.net"

// Service principal secret keys (gardener-extension-provider-azure's names).
const (
	KeyTenantID       = "tenantID"
	KeyClientID       = "clientID"
	KeyClientSecret   = "clientSecret"
	KeySubscriptionID = "subscriptionID"
	// Workload identity secrets hold the identity's config and its token.
	KeyWorkloadIdentityConfig = "config"
	KeyWorkloadIdentityToken  = "token"
)

// Provider builds Azure Blob stores. Its fields are fixed at start-up; nothing per request is kept.
type Provider struct {
	// RequestTimeout bounds one HTTP request (default 60s).
	RequestTimeout time.Duration
	// Cloud, when set, replaces the cloud chosen by providerConfig or region (tests point it at
	// a stand-in of Microsoft Entra ID and Azure Resource Manager).
	Cloud *cloud.Configuration
	// ManagementTransport, when set, carries the management plane's and the token endpoint's
	// requests (tests: a client that trusts the stand-in's certificate).
	ManagementTransport policy.Transporter
	// ListPageSize is the most entries one listing page asks for (0: Azure's maximum, 5000;
	// tests force small pages so that page boundaries fall between one blob's versions).
	ListPageSize int
}

// clouds are the Azure clouds by providerConfig name.
var clouds = map[string]cloud.Configuration{
	azureapi.CloudAzurePublic:     cloud.AzurePublic,
	azureapi.CloudAzureChina:      cloud.AzureChina,
	azureapi.CloudAzureGovernment: cloud.AzureGovernment,
}

var _ provider.Provider = (*Provider)(nil)

// Type implements provider.Provider.
func (p *Provider) Type() string { return Type }

// DecodeBucketConfig implements provider.Provider.
func (p *Provider) DecodeBucketConfig(raw []byte) (any, error) {
	return azureapi.DecodeBackupBucketConfig(raw)
}

// NewStore implements provider.Provider. What the secret holds decides the store: a service
// principal or a workload identity reaches the management plane (resource group, account,
// container, generated account keys); an account name and key reach one account's containers.
func (p *Provider) NewStore(_ context.Context, creds provider.Credentials) (objectstore.Store, error) {
	opts := p.managementOptions(p.cloudFor(creds))
	sub, cred, err := p.managementCredential(creds, opts)
	if err != nil {
		return nil, err
	}
	if cred == nil {
		a, err := parseAccount(creds.Data)
		if err != nil {
			return nil, err
		}
		if err := cloudDomainMatches(creds.BucketConfig, a); err != nil {
			return nil, err
		}
		client, err := p.newClient(a)
		if err != nil {
			return nil, err
		}
		return &store{client: client, pageSize: p.pageSize(), secretKeys: fmt.Sprintf("%q and %q", KeyStorageAccount, KeyStorageKey)}, nil
	}
	if creds.Region == "" {
		return nil, objectstore.Invalidf("spec.region is empty: a storage account needs a location")
	}
	return newARMStore(sub, cred, &arm.ClientOptions{ClientOptions: opts}, creds.Region, func(a account) (*store, error) {
		client, err := p.newClient(a)
		if err != nil {
			return nil, err
		}
		return &store{client: client, pageSize: p.pageSize()}, nil
	})
}

// pageSize is the listing page size: ListPageSize, or Azure's maximum.
func (p *Provider) pageSize() int32 {
	if p.ListPageSize <= 0 || p.ListPageSize > maxListPageSize {
		return maxListPageSize
	}
	return int32(p.ListPageSize)
}

// cloudFor is the stand-in's cloud in tests, else the configured cloud or the region's.
func (p *Provider) cloudFor(creds provider.Credentials) cloud.Configuration {
	if p.Cloud != nil {
		return *p.Cloud
	}
	cfg, _ := creds.BucketConfig.(*azureapi.BackupBucketConfig)
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
		next = &http.Client{Transport: httpclient.Transport(httpclient.Options{})}
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

// servicePrincipalKeys are the keys of a service principal secret, all required.
var servicePrincipalKeys = []string{KeyTenantID, KeyClientID, KeyClientSecret, KeySubscriptionID}

// present returns those of keys that data holds (empty values included).
func present(d map[string][]byte, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if _, ok := d[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

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

// refusedAs names the secret's keys when Microsoft Entra ID refuses a token (never their values).
type refusedAs struct {
	azcore.TokenCredential
	what string
}

func (r refusedAs) GetToken(ctx context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	tok, err := r.TokenCredential.GetToken(ctx, opts)
	if err != nil {
		return tok, fmt.Errorf("Microsoft Entra ID refused the %s: %w", r.what, err)
	}
	return tok, nil
}

// account is a storage account reached with its shared key.
type account struct {
	name, key, domain string
	emulator          bool
}

var accountName = regexp.MustCompile(`^[a-z0-9]{3,24}$`)

func parseAccount(d map[string][]byte) (account, error) {
	a := account{name: string(d[KeyStorageAccount]), key: string(d[KeyStorageKey]), domain: string(d[KeyDomain])}
	var missing []string
	for _, k := range []string{KeyStorageAccount, KeyStorageKey} {
		if len(d[k]) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return a, fmt.Errorf("%w: an account key secret needs the keys %q and %q; missing or empty %q (a service principal secret needs %q)",
			objectstore.ErrInvalidConfig, KeyStorageAccount, KeyStorageKey, missing, servicePrincipalKeys)
	}
	if !accountName.MatchString(a.name) {
		return a, objectstore.Invalidf("secret key %q: a storage account name has 3 to 24 lowercase letters and digits", KeyStorageAccount)
	}
	// The shared key signs requests after base64 decoding (azblob and etcd-backup-restore alike).
	if _, err := base64.StdEncoding.DecodeString(a.key); err != nil {
		return a, objectstore.Invalidf("secret key %q is not a valid account key: it must be the account key as the portal shows it, in base64", KeyStorageKey)
	}
	if v, ok := d[KeyEmulatorEnabled]; ok {
		var err error
		if a.emulator, err = strconv.ParseBool(string(v)); err != nil {
			return a, objectstore.Invalidf("secret key %q must be true or false", KeyEmulatorEnabled)
		}
	}
	if a.domain == "" {
		if a.emulator {
			return a, objectstore.Invalidf("secret key %q (host:port of the emulator) is required with %q", KeyDomain, KeyEmulatorEnabled)
		}
		a.domain = DefaultDomain
	}
	host, _, err := net.SplitHostPort(a.domain)
	if err != nil {
		host = a.domain
	}
	// Whitespace and control characters included: etcd-backup-restore reads the key's file as it is
	// (a trailing newline would end up in its endpoint).
	if strings.ContainsAny(a.domain, "/?#@") || strings.IndexFunc(a.domain, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 || host == "" {
		return a, objectstore.Invalidf("secret key %q must be a domain such as %s (or host:port of an emulator)", KeyDomain, DefaultDomain)
	}
	if a.emulator {
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return a, objectstore.Invalidf("secret key %q: the emulator (plain http) is accepted only on loopback", KeyEmulatorEnabled)
		}
	}
	return a, nil
}

// cloudDomains are the blob endpoint domains of the Azure clouds.
var cloudDomains = map[string]string{
	azureapi.CloudAzurePublic:     DefaultDomain,
	azureapi.CloudAzureChina:      "blob.core.chinacloudapi.cn",
	azureapi.CloudAzureGovernment: "blob.core.usgovcloudapi.net",
}

// cloudDomainMatches refuses, for an account key secret, a declared cloudConfiguration whose
// blob domain is not the secret's: the account is reached at the secret's domain (the default is
// Azure's public cloud), so the declared cloud would silently not be used. An emulator is exempt.
func cloudDomainMatches(config any, a account) error {
	cfg, _ := config.(*azureapi.BackupBucketConfig)
	if cfg == nil || cfg.CloudConfiguration == nil || a.emulator {
		return nil
	}
	want := cloudDomains[cfg.CloudConfiguration.Name]
	host, _, err := net.SplitHostPort(a.domain)
	if err != nil {
		host = a.domain
	}
	if want == "" || strings.EqualFold(host, want) {
		return nil
	}
	return fmt.Errorf("%w: spec.providerConfig.cloudConfiguration.name is %q, whose blob endpoints are under %s, but the account is reached under %s (secret key %q, default %s): set %q to %s or remove cloudConfiguration",
		objectstore.ErrInvalidConfig, cfg.CloudConfiguration.Name, want, a.domain, KeyDomain, DefaultDomain, KeyDomain, want)
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
	transport := httpclient.RoundTripper(httpclient.Options{
		Provider: Type, MaxIdleConnsPerHost: 256, ResponseHeaderTimeout: httpclient.Timeout(p.RequestTimeout), HTTP1: true,
	})
	return azblob.NewClientWithSharedKeyCredential(a.serviceURL(), cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: &http.Client{Transport: transport},
		// The SDK retries transient failures a few times; longer throttling reaches the deletion
		// engine, which slows down, and the controllers, which requeue.
		Retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: 200 * time.Millisecond, MaxRetryDelay: 5 * time.Second},
	}})
}

// etcdBackupKeys are the keys of the entry secret that etcd-backup-restore reads (v0.43.0,
// abs_snapstore.go readABSCredentialFiles: storageAccount, storageKey, domain; bucketName is
// gardener's). emulatorEnabled is this extension's only: the sidecar does not read it.
var etcdBackupKeys = []string{KeyStorageAccount, KeyStorageKey, KeyDomain, KeyBucketName}

// EtcdBackupSecretData implements provider.Provider: the ABS keys etcd-backup-restore reads and
// nothing else (a stray *.json key would be taken for a credentials file).
func (p *Provider) EtcdBackupSecretData(_ *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	if _, err := parseAccount(data); err != nil {
		return nil, err
	}
	if b := data[KeyBucketName]; len(b) > 0 {
		if rule := containerNameRule(string(b)); rule != "" {
			return nil, objectstore.Invalidf("secret key %q (%s) breaks Azure's container naming rules: %s", KeyBucketName, bucketNameSubject, rule)
		}
	}
	out := map[string][]byte{}
	for _, k := range etcdBackupKeys {
		if v, ok := data[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}
