// Package gcp is the Google Cloud Storage provider: GCS (or an emulator at a configured endpoint)
// through cloud.google.com/go/storage, behind the core's objectstore.Store.
package gcp

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

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
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
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
		return nil, objectstore.Invalidf("building the IAM client: %v", err)
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
	timeout := httpclient.Timeout(p.RequestTimeout)
	// Every request (storage, IAM and token exchanges) is counted by the metrics transport,
	// which sits under refusedTokens so that it counts the token endpoint's own status. The
	// deletion engine keeps many requests in flight to one host.
	base := httpclient.RoundTripper(httpclient.Options{Provider: Type, MaxIdleConnsPerHost: 256, ResponseHeaderTimeout: timeout})
	if err := credentialMode(creds.Data, creds.WorkloadIdentity); err != nil {
		return nil, "", err
	}
	var (
		authCreds *auth.Credentials
		projectID string
		err       error
	)
	if creds.WorkloadIdentity {
		tokenClient := &http.Client{Transport: refusedTokens{base, fmt.Sprintf("secret keys %q and %q (workload identity)", KeyToken, KeyConfig)}, Timeout: timeout}
		authCreds, projectID, err = workloadIdentityCredentials(creds.Data, tokenClient, scope)
	} else {
		tokenClient := &http.Client{Transport: refusedTokens{base, fmt.Sprintf("secret key %q", KeyServiceAccountJSON)}, Timeout: timeout}
		authCreds, projectID, err = serviceAccountCredentials(creds.Data[KeyServiceAccountJSON], tokenClient, scope)
	}
	if err != nil {
		return nil, "", err
	}
	httpClient, err := httptransport.NewClient(&httptransport.Options{Credentials: authCreds, BaseRoundTripper: base})
	if err != nil {
		return nil, "", objectstore.Invalidf("building the HTTP client: %v", err)
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
		return nil, objectstore.Invalidf("building the storage client: %v", err)
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

// credentialMode refuses secrets that mix the keys of the two ways to authenticate: a workload
// identity secret (config, token) with a service-account key, or a service-account secret with
// workload identity keys, which etcd-backup would be given in its place (EtcdBackupSecretData
// sees only the keys, not the secret's labels).
func credentialMode(data map[string][]byte, workloadIdentity bool) error {
	_, hasKey := data[KeyServiceAccountJSON]
	_, hasConfig := data[KeyConfig]
	_, hasToken := data[KeyToken]
	switch {
	case workloadIdentity && hasKey:
		return objectstore.Invalidf("a workload identity secret (keys %q and %q) must not also have the key %q: remove it, or use a secret without workload identity", KeyConfig, KeyToken, KeyServiceAccountJSON)
	case !workloadIdentity && (hasConfig || hasToken):
		return objectstore.Invalidf("the secret has the workload identity keys %q or %q but is not a workload identity secret (gardener's token requestor maintains those): remove them and keep %q, or use a WorkloadIdentity", KeyConfig, KeyToken, KeyServiceAccountJSON)
	}
	return nil
}

func parseServiceAccount(raw []byte) (*serviceAccount, error) {
	if len(raw) == 0 {
		return nil, objectstore.Invalidf("secret needs the key %q (or a workload identity)", KeyServiceAccountJSON)
	}
	sa := &serviceAccount{}
	if err := json.Unmarshal(raw, sa); err != nil {
		// The decoder's message may quote the key file: only its type is shown.
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return nil, objectstore.Invalidf("secret key %q: the field %q must be a string", KeyServiceAccountJSON, typeErr.Field)
		}
		return nil, objectstore.Invalidf("secret key %q is not a service-account key file (a JSON object)", KeyServiceAccountJSON)
	}
	// Only service account keys: other credential types (external accounts with file, URL or
	// executable sources) would make the extension read files or run programs the secret names.
	switch {
	case sa.Type != "service_account":
		return nil, objectstore.Invalidf("secret key %q must hold a service account key (type %q), found type %q", KeyServiceAccountJSON, "service_account", sa.Type)
	case sa.ProjectID == "":
		return nil, objectstore.Invalidf("secret key %q has no project_id", KeyServiceAccountJSON)
	case sa.ClientEmail == "":
		return nil, objectstore.Invalidf("secret key %q has no client_email", KeyServiceAccountJSON)
	case sa.PrivateKey == "":
		return nil, objectstore.Invalidf("secret key %q has no private_key", KeyServiceAccountJSON)
	}
	if err := checkPrivateKey(sa.PrivateKey); err != nil {
		return nil, objectstore.Invalidf("secret key %q: private_key %s (its value is not shown)", KeyServiceAccountJSON, err)
	}
	return sa, nil
}

// checkPrivateKey checks that a key file's private_key is what the auth library signs with: one
// PEM block holding an RSA key (PKCS #8, as GCP issues them, or PKCS #1). The error says what
// is wrong without any of the key.
func checkPrivateKey(pemKey string) error {
	block, _ := pem.Decode([]byte(pemKey))
	if block == nil {
		return errors.New("is not a PEM block")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if _, ok := k.(*rsa.PrivateKey); !ok {
			return errors.New("is not an RSA key")
		}
		return nil
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return nil
	}
	return errors.New("is a PEM block that holds no RSA private key")
}

func serviceAccountCredentials(raw []byte, client *http.Client, scope string) (*auth.Credentials, string, error) {
	sa, err := parseServiceAccount(raw)
	if err != nil {
		return nil, "", err
	}
	c, err := credentials.NewCredentialsFromJSON(credentials.ServiceAccount, raw, &credentials.DetectOptions{Scopes: []string{scope}, Client: client})
	if err != nil {
		return nil, "", objectstore.Invalidf("secret key %q: %v", KeyServiceAccountJSON, err)
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
		return nil, "", objectstore.Invalidf("config.credentialsConfig: %v", err)
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
		return objectstore.Invalidf("secret key %q: %s", KeyStorageAPIEndpoint, why)
	}
	// etcd-backup-restore reads the value as it is: a stray newline would break its URL.
	if strings.IndexFunc(string(raw), func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "", bad("must not contain spaces, newlines or control characters (a trailing newline too)")
	}
	u, err := url.Parse(string(raw))
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

// What etcd-backup-restore v0.43.0 accepts (pkg/snapstore/gcs_snapstore.go, validateGCSCredential):
// a secret it refuses leaves the shoot without backups, so the entry fails instead, naming the key.
var (
	etcdBRProjectID  = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
	etcdBRKeyFields  = []string{"type", "project_id", "client_email", "universe_domain", "auth_uri", "auth_provider_x509_cert_url", "client_x509_cert_url", "client_id", "private_key_id", "private_key", "token_uri"}
	etcdBRTokenURL   = "https://sts.googleapis.com/v1/token"
	etcdBRTokenType  = "urn:ietf:params:oauth:token-type:jwt"
	etcdBRImpersonal = regexp.MustCompile(`^https://iamcredentials\.googleapis\.com/v1/projects/-/serviceAccounts/.+:generateAccessToken$`)
)

// defaultUniverseDomain is the universe domain the auth library assumes when a configuration
// names none; etcd-backup-restore requires the field, so it is written out.
const defaultUniverseDomain = "googleapis.com"

// EtcdBackupSecretData implements provider.Provider: the GCS keys etcd-backup-restore reads and
// nothing else (a stray *.json key would be taken for a credentials file). What the sidecar
// would refuse is refused here with ErrInvalidConfig naming the key.
func (p *Provider) EtcdBackupSecretData(be *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	if err := validateBucketName(string(data[KeyBucketName])); err != nil {
		return nil, fmt.Errorf("secret key %q: %w", KeyBucketName, err)
	}
	_, hasConfig := data[KeyConfig]
	if _, hasKey := data[KeyServiceAccountJSON]; hasConfig && hasKey {
		return nil, objectstore.Invalidf("the entry secret has both %q (a service-account key) and %q (a workload identity): etcd-backup can be given only one", KeyServiceAccountJSON, KeyConfig)
	}
	out := map[string][]byte{KeyBucketName: data[KeyBucketName]}
	if ep, ok := data[KeyStorageAPIEndpoint]; ok {
		if _, err := storageEndpoint(ep); err != nil {
			return nil, err
		}
		out[KeyStorageAPIEndpoint] = ep
	}
	if hasConfig {
		raw := data[KeyConfig]
		cfg, ea, err := gcpapi.DecodeWorkloadIdentityConfig(raw)
		if err != nil {
			return nil, err
		}
		if err := sidecarAcceptsExternalAccount(cfg.ProjectID, ea); err != nil {
			return nil, err
		}
		if ea.UniverseDomain == "" {
			ea.UniverseDomain = defaultUniverseDomain
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
	sa, err := parseServiceAccount(data[KeyServiceAccountJSON])
	if err != nil {
		return nil, err
	}
	if !etcdBRProjectID.MatchString(sa.ProjectID) {
		return nil, objectstore.Invalidf("secret key %q: project_id %q is not a GCP project ID as etcd-backup-restore requires (%s)", KeyServiceAccountJSON, sa.ProjectID, etcdBRProjectID)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data[KeyServiceAccountJSON], &fields); err != nil {
		return nil, objectstore.Invalidf("secret key %q is not a JSON object", KeyServiceAccountJSON)
	}
	for f := range fields {
		if !slices.Contains(etcdBRKeyFields, f) {
			return nil, objectstore.Invalidf("secret key %q has the field %q, which etcd-backup-restore refuses; a key file has only %s", KeyServiceAccountJSON, f, strings.Join(etcdBRKeyFields, ", "))
		}
	}
	out[KeyServiceAccountJSON] = data[KeyServiceAccountJSON]
	return out, nil
}

// sidecarAcceptsExternalAccount checks a workload identity config against what
// etcd-backup-restore accepts in an external-account configuration.
func sidecarAcceptsExternalAccount(projectID string, ea *gcpapi.ExternalAccount) error {
	bad := func(field, why string) error {
		return objectstore.Invalidf("secret key %q: %s %s, as etcd-backup-restore requires", KeyConfig, field, why)
	}
	switch {
	case !etcdBRProjectID.MatchString(projectID):
		return bad("config.projectID "+strconvQuote(projectID), "must be a GCP project ID ("+etcdBRProjectID.String()+")")
	case ea.SubjectTokenType != etcdBRTokenType:
		return bad("config.credentialsConfig.subject_token_type", "must be "+strconvQuote(etcdBRTokenType))
	case ea.TokenURL != etcdBRTokenURL:
		return bad("config.credentialsConfig.token_url", "must be "+strconvQuote(etcdBRTokenURL))
	case ea.ServiceAccountImpersonationURL != "" && !etcdBRImpersonal.MatchString(ea.ServiceAccountImpersonationURL):
		return bad("config.credentialsConfig.service_account_impersonation_url", "must match "+etcdBRImpersonal.String())
	}
	return nil
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }
