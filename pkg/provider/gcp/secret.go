// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

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
	if err := gcpapi.ValidateBucketName(string(data[KeyBucketName])); err != nil {
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
