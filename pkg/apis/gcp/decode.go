// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/immutability"
)

// ManagedLabel marks the buckets this extension manages; providerConfig cannot set it.
const ManagedLabel = "managed-by"

// ManagedLabelValue is ManagedLabel's value.
const ManagedLabelValue = "gardener-extension-backup"

// AdoptedLabel marks a bucket this extension adopted from gardener-extension-provider-gcp (value
// "provider-gcp"); providerConfig cannot set it.
const AdoptedLabel = "gardener-backup-adopted-from"

// AbortRuleLabel records on a bucket whether the lifecycle rule that aborts abandoned uploads
// is this extension's ("added") or not ("none": an identical rule there is somebody else's);
// providerConfig cannot set it.
const AbortRuleLabel = "gardener-backup-abort-rule"

const (
	day = 24 * time.Hour
	// maxRetentionPeriod is GCS's limit for a retention policy (3,155,760,000 s, 100 years).
	maxRetentionPeriod = 3_155_760_000 * time.Second
	minSoftDelete      = 7 * day
	maxSoftDelete      = 90 * day
	maxLabels          = 64
)

// retentionPeriod is what GCS accepts as a bucket retention policy's period, from 24h on (its
// API takes whole seconds).
var retentionPeriod = immutability.Period{Min: day, Max: maxRetentionPeriod, Unit: time.Second, Rule: "must be whole seconds, at least 24h and at most 100 years"}

var (
	// GCS label rules: keys start with a lowercase letter; keys and values are at most 63
	// lowercase letters, digits, '_' and '-' (international characters are not accepted here).
	labelKey   = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
	labelValue = regexp.MustCompile(`^[a-z0-9_-]{0,63}$`)
)

// DecodeBackupBucketConfig strictly decodes and validates a BackupBucket providerConfig (JSON or
// YAML). Empty input gives the defaults. Errors wrap objectstore.ErrInvalidConfig and name the
// field path.
func DecodeBackupBucketConfig(raw []byte) (*BackupBucketConfig, error) {
	return decode.ProviderConfig(raw, KindBackupBucketConfig, ValidateBackupBucketConfig, APIVersion, ProviderGCPAPIVersion)
}

// ValidateBackupBucketConfig validates a decoded config.
func ValidateBackupBucketConfig(cfg *BackupBucketConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if im := cfg.Immutability; im != nil {
		errs = append(errs, immutability.Validate(path.Child("immutability"), im.RetentionType, im.RetentionPeriod.Duration, retentionPeriod)...)
	}
	if sd := cfg.SoftDelete; sd != nil {
		if d := sd.RetentionDuration.Duration; d != 0 && (d < minSoftDelete || d > maxSoftDelete || d%day != 0) {
			errs = append(errs, field.Invalid(path.Child("softDelete", "retentionDuration"), d.String(), "must be 0 (off) or whole days from 7 to 90 days"))
		}
	}
	if g := cfg.GeneratedCredentials; g != nil {
		errs = append(errs, g.Validate(path.Child("generatedCredentials"))...)
	}
	if e := cfg.EntryCredentials; e != nil {
		p := path.Child("entryCredentials")
		if e.Issuer != IssuerServiceAccountKey {
			errs = append(errs, field.NotSupported(p.Child("issuer"), e.Issuer, []string{IssuerServiceAccountKey}))
		}
		errs = append(errs, e.Validate(p)...)
	}
	// Three labels are the extension's: ManagedLabel, AbortRuleLabel, and AdoptedLabel on an
	// adopted bucket.
	if len(cfg.Labels) > maxLabels-3 {
		errs = append(errs, field.TooMany(path.Child("labels"), len(cfg.Labels), maxLabels-3))
	}
	for k, v := range cfg.Labels {
		p := path.Child("labels").Key(k)
		switch {
		case k == ManagedLabel, k == AdoptedLabel, k == AbortRuleLabel:
			errs = append(errs, field.Forbidden(p, "is set by the extension"))
		case !labelKey.MatchString(k):
			errs = append(errs, field.Invalid(p, k, "a label key starts with a lowercase letter and has at most 63 lowercase letters, digits, '_' or '-'"))
		}
		if !labelValue.MatchString(v) {
			errs = append(errs, field.Invalid(p, v, "a label value has at most 63 lowercase letters, digits, '_' or '-'"))
		}
	}
	errs = append(errs, cfg.BackupFreshness.Validate(path.Child("backupFreshness"))...)
	errs = append(errs, cfg.Copy.Validate(path.Child("copy"), Type, decodeCopy, ValidateBucketName)...)
	errs = append(errs, cfg.Copy.ValidateHandBack(path, cfg.HandBack)...)
	if cfg.Store != nil && cfg.Store.EndpointOverride != nil {
		errs = append(errs, validateEndpointOverride(path.Child("store", "endpointOverride"), *cfg.Store.EndpointOverride)...)
	}
	return errs
}

// validateEndpointOverride accepts what provider-gcp's admission accepts (v1.53.4
// pkg/apis/gcp/validation/backupbucket.go:46-57: a URL with the https scheme; its list of allowed
// URLs is that admission's own configuration), and an absolute URL with a host only, without
// credentials, query or fragment: etcd-backup-restore is pointed at it as it is.
func validateEndpointOverride(path *field.Path, endpoint string) field.ErrorList {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return field.ErrorList{field.Invalid(path, endpoint, "must be an absolute https URL such as https://storage.me-central2.rep.googleapis.com")}
	case u.Scheme != "https":
		return field.ErrorList{field.Invalid(path, endpoint, "must use the https scheme (provider-gcp's admission refuses any other)")}
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return field.ErrorList{field.Invalid(path, endpoint, "must not carry credentials, a query or a fragment")}
	}
	return nil
}

// DecodeWorkloadIdentityConfig strictly decodes a workload identity secret's "config" key and
// checks that its credentials configuration is an external account.
func DecodeWorkloadIdentityConfig(raw []byte) (*WorkloadIdentityConfig, *ExternalAccount, error) {
	path := field.NewPath("config")
	cfg := &WorkloadIdentityConfig{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil, decode.Invalid(field.ErrorList{field.Required(path, `the workload identity secret's "config" key: a WorkloadIdentityConfig`)})
	}
	if err := decode.Strict(raw, cfg, path, KindWorkloadIdentityConfig, APIVersion, ProviderGCPAPIVersion); err != nil {
		return nil, nil, err
	}
	var errs field.ErrorList
	if cfg.ProjectID == "" {
		errs = append(errs, field.Required(path.Child("projectID"), "the GCP project of the bucket"))
	}
	ea := &ExternalAccount{}
	if len(cfg.CredentialsConfig) == 0 {
		errs = append(errs, field.Required(path.Child("credentialsConfig"), "the external account credentials configuration"))
	} else if err := json.Unmarshal(cfg.CredentialsConfig, ea); err != nil {
		errs = append(errs, field.Invalid(path.Child("credentialsConfig"), "", fmt.Sprintf("not a JSON object: %v", err)))
	} else {
		errs = append(errs, ea.validate(path.Child("credentialsConfig"))...)
	}
	if err := decode.Invalid(errs); err != nil {
		return nil, nil, err
	}
	return cfg, ea, nil
}

// ExternalAccount is the part of an external account credentials configuration the extension
// uses. The credential source is never taken from it: the token comes from the secret.
type ExternalAccount struct {
	Type                           string `json:"type"`
	Audience                       string `json:"audience"`
	SubjectTokenType               string `json:"subject_token_type"`
	TokenURL                       string `json:"token_url"`
	ServiceAccountImpersonationURL string `json:"service_account_impersonation_url,omitempty"`
	UniverseDomain                 string `json:"universe_domain,omitempty"`
}

func (ea *ExternalAccount) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ea.Type != "external_account" {
		errs = append(errs, field.NotSupported(path.Child("type"), ea.Type, []string{"external_account"}))
	}
	if ea.Audience == "" {
		errs = append(errs, field.Required(path.Child("audience"), ""))
	}
	if ea.SubjectTokenType == "" {
		errs = append(errs, field.Required(path.Child("subject_token_type"), ""))
	}
	if ea.TokenURL == "" {
		errs = append(errs, field.Required(path.Child("token_url"), ""))
	}
	return errs
}

// decodeCopy is the strict decoding of copy.providerConfig: a BackupBucketConfig of this type.
func decodeCopy(raw []byte) error {
	_, err := DecodeBackupBucketConfig(raw)
	return err
}

// The copy of another type than this one (copy.type) is validated with this type's rules.
func init() { copystore.RegisterType(Type, decodeCopy, ValidateBucketName) }
