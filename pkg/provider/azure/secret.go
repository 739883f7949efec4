// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"encoding/base64"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

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

// secretData is what etcd-backup-restore needs to reach the account.
func (a account) secretData() map[string][]byte {
	d := map[string][]byte{KeyStorageAccount: []byte(a.name), KeyStorageKey: []byte(a.key), KeyDomain: []byte(a.domain)}
	if a.emulator {
		d[KeyEmulatorEnabled] = []byte("true")
	}
	return d
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
func cloudDomainMatches(cfg *azureapi.BackupBucketConfig, a account) error {
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

// accountKeyOnly refuses the providerConfig settings that live in the storage account's
// management plane, which a secret with only an account key cannot reach: declared, they would
// silently not be applied.
func accountKeyOnly(cfg *azureapi.BackupBucketConfig) error {
	if cfg == nil {
		return nil
	}
	var set []string
	if cfg.Immutability != nil {
		set = append(set, "spec.providerConfig.immutability (a container immutability policy)")
	}
	if cfg.HandBack {
		set = append(set, "spec.providerConfig.handBack (the account's management policy)")
	}
	if cfg.SoftDelete != nil {
		set = append(set, "spec.providerConfig.softDelete (the account's soft delete)")
	}
	if cfg.StorageAccount != nil && cfg.StorageAccount.SKUName != "" {
		set = append(set, "spec.providerConfig.storageAccount.skuName (the account's redundancy)")
	}
	if cfg.RotationConfig != nil {
		set = append(set, "spec.providerConfig.rotationConfig (the generated secret's key rotation: no secret is generated)")
	}
	if cfg.Rotation != nil {
		set = append(set, "spec.providerConfig.rotation (the generated secret's key rotation: no secret is generated)")
	}
	if len(set) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: set through the storage account's management plane, which a secret with only an account key (%q, %q) cannot reach; use a service principal or workload identity secret, or remove the setting",
		objectstore.ErrInvalidConfig, strings.Join(set, ", "), KeyStorageAccount, KeyStorageKey)
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
		if rule := azureapi.ContainerNameRule(string(b)); rule != "" {
			return nil, objectstore.Invalidf("secret key %q (%s) breaks Azure's container naming rules: %s", KeyBucketName, azureapi.BucketNameSubject, rule)
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
