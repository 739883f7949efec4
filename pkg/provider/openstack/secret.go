// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/gophercloud/gophercloud/v2"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/validation"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/httpclient"
)

// Secret data keys (the names etcd-backup-restore and gardener-extension-provider-openstack use).
const (
	KeyAuthURL                     = "authURL"
	KeyDomainName                  = "domainName"
	KeyTenantName                  = "tenantName"
	KeyRegion                      = "region"
	KeyUsername                    = "username"
	KeyPassword                    = "password"
	KeyApplicationCredentialID     = "applicationCredentialID"
	KeyApplicationCredentialName   = "applicationCredentialName"
	KeyApplicationCredentialSecret = "applicationCredentialSecret"
	KeyCACert                      = "caCert"
	KeyInsecure                    = "insecure"
	KeyBucketName                  = "bucketName"
)

// credentials is a validated credentials secret. domainName and tenantName are the secret's
// keys whatever the authentication: generated credentials hand them on to etcd-backup-restore.
type credentials struct {
	auth                   gophercloud.AuthOptions
	region                 string
	regionSource           string // where region comes from, for messages
	domainName, tenantName string
	caCert                 []byte
	insecure               bool
	// keys names the secret keys the credentials came from, for errors that refuse them.
	keys string
}

// identifierKeys are secret keys whose values are names or URLs: a space or control character
// at either end (a newline from echo, above all) or inside is never meant, and Keystone would
// only answer 401 for it (etcd-backup-restore, which reads them too, the same).
var identifierKeys = []string{KeyAuthURL, KeyDomainName, KeyTenantName, KeyUsername, KeyRegion, KeyApplicationCredentialID, KeyApplicationCredentialName, KeyBucketName}

// quoted lists secret keys for messages: "a", "b" and "c".
func quoted(keys ...string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// validateValues refuses the values of identifierKeys with control characters or surrounding
// spaces, naming the key and never the value.
func validateValues(data map[string][]byte) error {
	for _, k := range identifierKeys {
		v := string(data[k])
		if v == "" {
			continue
		}
		if strings.TrimSpace(v) != v || strings.IndexFunc(v, unicode.IsControl) >= 0 {
			return objectstore.Invalidf("secret key %q has spaces or control characters around or in its value (a trailing newline, often from echo when base64-encoding)", k)
		}
	}
	return nil
}

// validateAuthURL refuses an authURL neither gophercloud nor etcd-backup-restore can use. Its
// value is never shown: a URL may hold credentials.
func validateAuthURL(raw string) error {
	return validation.URL(KeyAuthURL, raw, "https://keystone.example.com:5000/v3", "the credentials belong in their own keys")
}

// parseCredentials validates the secret, naming a missing or malformed key, never a value.
func parseCredentials(data map[string][]byte, region string) (credentials, error) {
	get := func(k string) string { return string(data[k]) }
	c := credentials{region: get(KeyRegion), regionSource: fmt.Sprintf("the secret key %q", KeyRegion), caCert: data[KeyCACert], domainName: get(KeyDomainName), tenantName: get(KeyTenantName)}
	if c.region == "" {
		c.region, c.regionSource = region, "spec.region"
	}
	missing := func(what string) error {
		return objectstore.Invalidf("the credentials secret lacks %s", what)
	}
	if get(KeyAuthURL) == "" {
		return c, missing(fmt.Sprintf("%q", KeyAuthURL))
	}
	if err := validateAuthURL(get(KeyAuthURL)); err != nil {
		return c, err
	}
	if err := validateValues(data); err != nil {
		return c, err
	}
	if c.region == "" {
		return c, missing(fmt.Sprintf("%q (and spec.region is empty)", KeyRegion))
	}
	if c.regionSource == "spec.region" && (strings.TrimSpace(c.region) != c.region || strings.IndexFunc(c.region, unicode.IsControl) >= 0) {
		return c, objectstore.Invalidf("spec.region %q has spaces or control characters", c.region)
	}
	if v, ok := data[KeyInsecure]; ok {
		b, err := strconv.ParseBool(string(v))
		if err != nil {
			return c, objectstore.Invalidf("secret key %q must be true or false (as strconv.ParseBool reads it, without spaces or a newline)", KeyInsecure)
		}
		c.insecure = b
	}
	if err := httpclient.CheckCA(c.caCert, KeyCACert); err != nil {
		return c, err
	}
	c.auth = gophercloud.AuthOptions{IdentityEndpoint: get(KeyAuthURL), AllowReauth: true}
	appSecret := get(KeyApplicationCredentialSecret)
	switch {
	case appSecret != "" && get(KeyApplicationCredentialID) != "":
		c.auth.ApplicationCredentialID, c.auth.ApplicationCredentialSecret = get(KeyApplicationCredentialID), appSecret
		c.keys = quoted(KeyApplicationCredentialID, KeyApplicationCredentialSecret)
	case appSecret != "" && get(KeyApplicationCredentialName) != "":
		if get(KeyUsername) == "" || get(KeyDomainName) == "" {
			return c, missing(fmt.Sprintf("%q and %q, which an application credential given by name needs", KeyUsername, KeyDomainName))
		}
		c.auth.ApplicationCredentialName, c.auth.ApplicationCredentialSecret = get(KeyApplicationCredentialName), appSecret
		c.auth.Username, c.auth.DomainName = get(KeyUsername), get(KeyDomainName)
		c.keys = quoted(KeyApplicationCredentialName, KeyApplicationCredentialSecret, KeyUsername, KeyDomainName)
	case appSecret != "":
		return c, missing(fmt.Sprintf("%q or %q beside %q", KeyApplicationCredentialID, KeyApplicationCredentialName, KeyApplicationCredentialSecret))
	case get(KeyPassword) == "" && (get(KeyApplicationCredentialID) != "" || get(KeyApplicationCredentialName) != ""):
		return c, missing(fmt.Sprintf("%q beside %q or %q", KeyApplicationCredentialSecret, KeyApplicationCredentialID, KeyApplicationCredentialName))
	default:
		for _, k := range []string{KeyDomainName, KeyTenantName, KeyUsername, KeyPassword} {
			if get(k) == "" {
				return c, missing(fmt.Sprintf("%q (password authentication needs %s, %s, %s and %s; or use an application credential)", k, KeyDomainName, KeyTenantName, KeyUsername, KeyPassword))
			}
		}
		c.auth.Username, c.auth.Password = get(KeyUsername), get(KeyPassword)
		c.auth.DomainName, c.auth.TenantName = get(KeyDomainName), get(KeyTenantName)
		// Keystone answers 401 alike for a wrong password and an unknown user, domain or project.
		c.keys = quoted(KeyUsername, KeyPassword, KeyDomainName, KeyTenantName)
	}
	return c, nil
}

// The keys etcd-backup-restore's Swift store reads from the mounted etcd-backup secret
// (v0.43.0, pkg/snapstore/swift_snapstore.go: readSwiftCredentialDir, isSwiftConfigCorrect):
// authURL, domainName and tenantName always, then either password credentials or application
// credentials. A directory with keys of both is refused ("openstack swift credentials are not
// passed correctly") and the sidecar never takes a snapshot, so exactly one set is written.
// region is read too (the object-store endpoint comes from the catalog; see
// docs/etcd-backup-secret.md), bucketName is gardener's.
var (
	etcdBackupCommonKeys   = []string{KeyAuthURL, KeyDomainName, KeyTenantName, KeyBucketName}
	etcdBackupPasswordKeys = []string{KeyUsername, KeyPassword}
	etcdBackupAppCredKeys  = []string{KeyApplicationCredentialID, KeyApplicationCredentialName, KeyApplicationCredentialSecret}
)

// usesApplicationCredential says whether a secret authenticates with an application credential.
func usesApplicationCredential(data map[string][]byte) bool {
	return len(data[KeyApplicationCredentialSecret]) > 0
}

// consumable checks that etcd-backup-restore can use what a secret gives the shoots'
// etcd-backup: beyond what this extension needs, its Swift store requires domainName and
// tenantName with every kind of credentials and, when the secret's own application credential is
// handed on (handedOn), both its ID (which it authenticates with) and its name (which it only
// checks is set). The error names the first key missing, never a value.
func consumable(data map[string][]byte, handedOn bool) error {
	need := []string{KeyDomainName, KeyTenantName}
	if handedOn && usesApplicationCredential(data) {
		need = append(need, KeyApplicationCredentialID, KeyApplicationCredentialName)
	}
	for _, k := range need {
		if len(data[k]) == 0 {
			return fmt.Errorf("%w: the credentials secret lacks %q, which etcd-backup-restore needs in the shoots' etcd-backup "+
				"(its Swift store reads %s, %s and %s, and either %s and %s or %s, %s and %s)", objectstore.ErrInvalidConfig, k,
				KeyAuthURL, KeyDomainName, KeyTenantName, KeyUsername, KeyPassword,
				KeyApplicationCredentialID, KeyApplicationCredentialName, KeyApplicationCredentialSecret)
		}
	}
	return nil
}

// bucketCheck is consumable for a bucket's operator secret: shoots get it as it is unless the
// bucket publishes generated credentials (without pass-through), which inherit its domainName
// and tenantName. The bucket is refused before it is made, so that no shoot comes to depend on
// backups that would never be taken.
func bucketCheck(data map[string][]byte, cfg *osapi.BackupBucketConfig) error {
	g := cfg.GeneratedCredentials
	return consumable(data, g == nil || g.AllowPassThrough)
}

// EtcdBackupSecretData implements provider.Provider: exactly the keys etcd-backup-restore reads,
// with one kind of credentials (an operator's secret with an application credential and a stray
// username or password gives the application credential only).
func (p *Provider) EtcdBackupSecretData(be *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	if _, err := parseCredentials(data, be.Spec.Region); err != nil {
		return nil, err
	}
	if err := consumable(data, true); err != nil {
		return nil, err
	}
	if b := data[KeyBucketName]; len(b) > 0 {
		if rule := osapi.ContainerNameRule(string(b)); rule != "" {
			return nil, objectstore.Invalidf("secret key %q (the BackupBucket's name) breaks Swift's container naming rules: %s", KeyBucketName, rule)
		}
	}
	keys := etcdBackupPasswordKeys
	if usesApplicationCredential(data) {
		keys = etcdBackupAppCredKeys
	}
	out := map[string][]byte{}
	for _, k := range append(slices.Clone(etcdBackupCommonKeys), keys...) {
		if v, ok := data[k]; ok && len(v) > 0 {
			out[k] = v
		}
	}
	out[KeyRegion] = []byte(be.Spec.Region)
	if r := data[KeyRegion]; len(r) > 0 {
		out[KeyRegion] = r
	}
	return out, nil
}
