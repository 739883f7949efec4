// Package gcp is the Google Cloud Storage provider: GCS (or an emulator at a configured endpoint)
// through cloud.google.com/go/storage, behind the core's objectstore.Store.
package gcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/auth/credentials/externalaccount"
	"cloud.google.com/go/auth/httptransport"
	"cloud.google.com/go/storage"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Type is the extension type this provider serves.
const Type = "gcp"

// Secret data keys: the names etcd-backup-restore reads, so that they reach etcd-backup unchanged.
const (
	KeyServiceAccountJSON = "serviceaccount.json"
	KeyStorageAPIEndpoint = "storageAPIEndpoint"
	KeyProjectID          = "projectID"
	KeyCredentialsConfig  = "credentialsConfig"
	KeyConfig             = "config"
	KeyToken              = "token"
	KeyBucketName         = "bucketName"
)

// Token mount directories of etcd-druid's backup-restore sidecar (target and "source-" entries):
// the workload identity token file the sidecar's credentials configuration points at.
const (
	tokenDir       = "/var/.gcp"
	sourceTokenDir = "/var/.source-gcp"
)

// OAuth scopes: storage (bucket administration included), or the whole platform when the store
// also issues service-account keys through the IAM API.
const (
	storageScope       = "https://www.googleapis.com/auth/devstorage.full_control"
	cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"
)

// Provider builds GCS stores. Its fields are fixed at start-up; nothing per request is kept.
type Provider struct {
	// RequestTimeout bounds one HTTP request (default 60s).
	RequestTimeout time.Duration
	// IAMEndpoint overrides the IAM API endpoint used for generated credentials (tests point it
	// at a stand-in; empty: iam.googleapis.com).
	IAMEndpoint string
	// ListPageSize is the page size of object listings (0: the store's maximum, 1000; tests set
	// a few so that listings cross page boundaries among the generations of one object).
	ListPageSize int
}

var _ provider.Provider = (*Provider)(nil)

// Type implements provider.Provider.
func (p *Provider) Type() string { return Type }

// DecodeBucketConfig implements provider.Provider.
func (p *Provider) DecodeBucketConfig(raw []byte) (any, error) {
	return gcpapi.DecodeBackupBucketConfig(raw)
}

// NewStore implements provider.Provider.
func (p *Provider) NewStore(ctx context.Context, creds provider.Credentials) (objectstore.Store, error) {
	// Only the bucket controller passes a config: it publishes the generated credentials.
	cfg, _ := creds.BucketConfig.(*gcpapi.BackupBucketConfig)
	if (cfg == nil || cfg.GeneratedCredentials == nil) && !creds.Retiring {
		client, projectID, err := p.NewClient(ctx, creds)
		if err != nil {
			return nil, err
		}
		return &store{client: client, projectID: projectID, pageSize: p.ListPageSize}, nil
	}
	httpClient, projectID, err := p.authorizedClient(creds, cloudPlatformScope)
	if err != nil {
		return nil, err
	}
	client, err := newStorageClient(ctx, httpClient, creds.Data)
	if err != nil {
		return nil, err
	}
	opts := []option.ClientOption{option.WithHTTPClient(httpClient)}
	if p.IAMEndpoint != "" {
		opts = append(opts, option.WithEndpoint(p.IAMEndpoint))
	}
	svc, err := iam.NewService(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: building the IAM client: %v", objectstore.ErrInvalidConfig, err)
	}
	return &iamIssuer{store: &store{client: client, projectID: projectID, pageSize: p.ListPageSize}, iam: svc, endpoint: creds.Data[KeyStorageAPIEndpoint]}, nil
}

// NewClient builds the storage client a store uses and returns the project it works in (the
// benchmarks build their baselines with it, so that strategies differ in nothing but strategy).
// Only the secret is consulted: no environment, metadata server or well-known file.
func (p *Provider) NewClient(ctx context.Context, creds provider.Credentials) (*storage.Client, string, error) {
	httpClient, projectID, err := p.authorizedClient(creds, storageScope)
	if err != nil {
		return nil, "", err
	}
	client, err := newStorageClient(ctx, httpClient, creds.Data)
	return client, projectID, err
}

// authorizedClient is an HTTP client that authenticates with the secret's credentials for scope,
// and the project the credentials belong to.
func (p *Provider) authorizedClient(creds provider.Credentials, scope string) (*http.Client, string, error) {
	timeout := p.RequestTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	base := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   256, // the deletion engine keeps many requests in flight to one host
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	tokenClient := &http.Client{Transport: refusedTokens{base}, Timeout: timeout}

	var (
		authCreds *auth.Credentials
		projectID string
		err       error
	)
	if creds.WorkloadIdentity {
		authCreds, projectID, err = workloadIdentityCredentials(creds.Data, tokenClient, scope)
	} else {
		authCreds, projectID, err = serviceAccountCredentials(creds.Data[KeyServiceAccountJSON], tokenClient, scope)
	}
	if err != nil {
		return nil, "", err
	}
	httpClient, err := httptransport.NewClient(&httptransport.Options{Credentials: authCreds, BaseRoundTripper: base})
	if err != nil {
		return nil, "", fmt.Errorf("%w: building the HTTP client: %v", objectstore.ErrInvalidConfig, err)
	}
	return httpClient, projectID, nil
}

// newStorageClient is the storage client on an authorized HTTP client, at the secret's endpoint.
func newStorageClient(ctx context.Context, httpClient *http.Client, data map[string][]byte) (*storage.Client, error) {
	endpoint, err := storageEndpoint(data[KeyStorageAPIEndpoint])
	if err != nil {
		return nil, err
	}
	opts := []option.ClientOption{option.WithHTTPClient(httpClient), storage.WithJSONReads()}
	if endpoint != "" {
		opts = append(opts, option.WithEndpoint(endpoint))
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: building the storage client: %v", objectstore.ErrInvalidConfig, err)
	}
	// The SDK retries idempotent requests on 429, 5xx and transport errors with back-off; a few
	// attempts, then the deletion engine (which slows down) and the controllers (which requeue)
	// take over, so that one throttled object does not hold a whole reconcile.
	client.SetRetry(storage.WithMaxAttempts(4))
	return client, nil
}

// serviceAccount is the part of a service account key file the extension checks.
type serviceAccount struct {
	Type        string `json:"type"`
	ProjectID   string `json:"project_id"`
	ClientEmail string `json:"client_email"`
	PrivateKey  string `json:"private_key"`
}

func parseServiceAccount(raw []byte) (*serviceAccount, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: secret needs the key %q (or a workload identity)", objectstore.ErrInvalidConfig, KeyServiceAccountJSON)
	}
	sa := &serviceAccount{}
	if err := json.Unmarshal(raw, sa); err != nil {
		return nil, fmt.Errorf("%w: secret key %q is not a JSON object", objectstore.ErrInvalidConfig, KeyServiceAccountJSON)
	}
	// Only service account keys: other credential types (external accounts with file, URL or
	// executable sources) would make the extension read files or run programs the secret names.
	switch {
	case sa.Type != "service_account":
		return nil, fmt.Errorf("%w: secret key %q must hold a service account key (type %q), found type %q", objectstore.ErrInvalidConfig, KeyServiceAccountJSON, "service_account", sa.Type)
	case sa.ProjectID == "":
		return nil, fmt.Errorf("%w: secret key %q has no project_id", objectstore.ErrInvalidConfig, KeyServiceAccountJSON)
	case sa.ClientEmail == "" || sa.PrivateKey == "":
		return nil, fmt.Errorf("%w: secret key %q has no client_email or private_key", objectstore.ErrInvalidConfig, KeyServiceAccountJSON)
	}
	return sa, nil
}

func serviceAccountCredentials(raw []byte, client *http.Client, scope string) (*auth.Credentials, string, error) {
	sa, err := parseServiceAccount(raw)
	if err != nil {
		return nil, "", err
	}
	c, err := credentials.NewCredentialsFromJSON(credentials.ServiceAccount, raw, &credentials.DetectOptions{Scopes: []string{scope}, Client: client})
	if err != nil {
		return nil, "", fmt.Errorf("%w: secret key %q: %v", objectstore.ErrInvalidConfig, KeyServiceAccountJSON, err)
	}
	return c, sa.ProjectID, nil
}

func workloadIdentityCredentials(data map[string][]byte, client *http.Client, scope string) (*auth.Credentials, string, error) {
	cfg, ea, err := gcpapi.DecodeWorkloadIdentityConfig(data[KeyConfig])
	if err != nil {
		return nil, "", err
	}
	token := data[KeyToken]
	if len(token) == 0 {
		return nil, "", fmt.Errorf("%w: workload identity secret has no %q yet", objectstore.ErrUnauthenticated, KeyToken)
	}
	c, err := externalaccount.NewCredentials(&externalaccount.Options{
		Audience:                       ea.Audience,
		SubjectTokenType:               ea.SubjectTokenType,
		TokenURL:                       ea.TokenURL,
		ServiceAccountImpersonationURL: ea.ServiceAccountImpersonationURL,
		UniverseDomain:                 ea.UniverseDomain,
		Scopes:                         []string{scope},
		SubjectTokenProvider:           staticToken(token),
		Client:                         client,
	})
	if err != nil {
		return nil, "", fmt.Errorf("%w: config.credentialsConfig: %v", objectstore.ErrInvalidConfig, err)
	}
	return c, cfg.ProjectID, nil
}

// staticToken hands the secret's workload identity token to the token exchange.
type staticToken []byte

func (t staticToken) SubjectToken(context.Context, *externalaccount.RequestOptions) (string, error) {
	return string(t), nil
}

// storageEndpoint validates the optional endpoint override: an absolute https URL without
// credentials, query or fragment (plain http only on loopback, for emulators). The storage
// JSON API path is added when missing.
func storageEndpoint(raw []byte) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	bad := func(why string) error {
		return fmt.Errorf("%w: secret key %q: %s", objectstore.ErrInvalidConfig, KeyStorageAPIEndpoint, why)
	}
	u, err := url.Parse(strings.TrimSpace(string(raw)))
	if err != nil || u.Host == "" || !u.IsAbs() {
		return "", bad("must be an absolute URL such as https://storage.europe-west1.rep.googleapis.com/storage/v1/")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", bad("must not carry credentials, a query or a fragment")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return "", bad("plain http is accepted only for loopback emulators; use https")
		}
	default:
		return "", bad("scheme must be https")
	}
	switch strings.Trim(u.Path, "/") {
	case "":
		u.Path = "/storage/v1/"
	case "storage/v1":
		u.Path = "/storage/v1/"
	default:
		return "", bad("path must be empty or /storage/v1/")
	}
	return u.String(), nil
}

// EtcdBackupSecretData implements provider.Provider: the GCS keys etcd-backup-restore reads and
// nothing else (a stray *.json key would be taken for a credentials file).
func (p *Provider) EtcdBackupSecretData(be *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	out := map[string][]byte{KeyBucketName: data[KeyBucketName]}
	if ep, ok := data[KeyStorageAPIEndpoint]; ok {
		if _, err := storageEndpoint(ep); err != nil {
			return nil, err
		}
		out[KeyStorageAPIEndpoint] = ep
	}
	if raw, ok := data[KeyConfig]; ok {
		cfg, ea, err := gcpapi.DecodeWorkloadIdentityConfig(raw)
		if err != nil {
			return nil, err
		}
		dir := tokenDir
		if strings.HasPrefix(be.Name, "source-") {
			dir = sourceTokenDir
		}
		// The sidecar reads the token from the file that etcd-druid mounts from this secret's
		// "token" key (kept up to date by gardener's token requestor).
		sidecarConfig, err := json.Marshal(struct {
			*gcpapi.ExternalAccount
			CredentialSource map[string]any `json:"credential_source"`
		}{ea, map[string]any{"file": dir + "/" + KeyToken, "format": map[string]string{"type": "text"}}})
		if err != nil {
			return nil, err
		}
		out[KeyProjectID] = []byte(cfg.ProjectID)
		out[KeyCredentialsConfig] = sidecarConfig
		// etcd-druid points GOOGLE_APPLICATION_CREDENTIALS at serviceaccount.json, whatever the
		// credential type, so the external account configuration goes there too.
		out[KeyServiceAccountJSON] = sidecarConfig
		return out, nil
	}
	if _, err := parseServiceAccount(data[KeyServiceAccountJSON]); err != nil {
		return nil, err
	}
	out[KeyServiceAccountJSON] = data[KeyServiceAccountJSON]
	return out, nil
}
