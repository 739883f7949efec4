// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package copystore is the providerConfig part every provider shares that declares a second
// store, the copy: `copy:` in this extension's seed configuration (the Seed's spec.extensions
// entry of type backup-<provider>). The BackupBucket's controller converges a second bucket there
// with the same provider's management, and the entry copy controller copies each entry's
// snapshots from the primary bucket into it. It is read on each BackupEntry too (gardenlet copies
// the bucket's providerConfig into every extension BackupEntry, and the seed configuration is
// merged into both).
package copystore

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
)

// DefaultRPO is the lag BackupsCopied tolerates when copy.rpo is not set.
const DefaultRPO = 15 * time.Minute

// BucketSuffix makes the copy bucket's default name: the BackupBucket's name and this.
const BucketSuffix = "-copy"

// CredentialsNamespace is the seed's namespace that gardenlet copies the Secrets named in the
// Seed's spec.resources into (gardener's deployReferencedResources), each as
// CredentialsPrefix + its name.
const CredentialsNamespace = "garden"

// CredentialsPrefix is the prefix of the copies gardenlet makes of the Seed's spec.resources
// (gardener's v1beta1constants.ReferencedResourcesPrefix).
const CredentialsPrefix = "ref-"

// Settings is `copy:`: the second store every entry's snapshots are copied to.
type Settings struct {
	// Type is the second store's provider type: any registered type (RegisterType: every
	// provider's API registers its own), the empty string meaning the primary's.
	Type string `json:"type,omitempty"`
	// Region is the copy bucket's region (empty: the store's default, as for the primary).
	Region string `json:"region,omitempty"`
	// BucketName is the copy bucket's name (empty: the BackupBucket's name + "-copy").
	BucketName string `json:"bucketName,omitempty"`
	// CredentialsRef is the name of a Secret that the Seed's spec.resources lists (its
	// resourceRef.name): gardenlet copies it into the seed's garden namespace as ref-<name>, and
	// the copy bucket is managed, written and emptied with those credentials only.
	CredentialsRef string `json:"credentialsRef"`
	// ProviderConfig is the copy bucket's own BackupBucketConfig of Type (immutability,
	// encryption, disabled settings ...), converged as the primary's is. Generated or entry
	// credentials, hand-back and a copy of the copy are refused: nobody but this extension
	// writes the copy.
	ProviderConfig *runtime.RawExtension `json:"providerConfig,omitempty"`
	// RPO is the lag the BackupsCopied condition tolerates (default 15m): how much older than
	// the primary's newest snapshot the copy's may be.
	RPO *metav1.Duration `json:"rpo,omitempty"`
	// Interval is how often each entry is copied (default: the extension's
	// --entry-copy-interval).
	Interval *metav1.Duration `json:"interval,omitempty"`
	// Serve is which store every entry's etcd-backup secret names (ServePrimary when empty):
	// ServeCopy is the documented step of a failover or a move (serve.go).
	Serve Serve `json:"serve,omitempty"`
	// Failover is the declared automatic failover (failover.go): nil, none.
	Failover *Failover `json:"failover,omitempty"`
}

// Bucket is the copy bucket's name for the BackupBucket primary.
func (s *Settings) Bucket(primary string) string {
	if s.BucketName != "" {
		return s.BucketName
	}
	return primary + BucketSuffix
}

// CredentialsSecret is the name of the copy's credentials secret in CredentialsNamespace.
func (s *Settings) CredentialsSecret() string { return CredentialsPrefix + s.CredentialsRef }

// RPOOrDefault is RPO, or DefaultRPO when not set.
func (s *Settings) RPOOrDefault() time.Duration {
	if s.RPO == nil {
		return DefaultRPO
	}
	return s.RPO.Duration
}

// IntervalOr is Interval, or def when not set.
func (s *Settings) IntervalOr(def time.Duration) time.Duration {
	if s.Interval == nil {
		return def
	}
	return s.Interval.Duration
}

// RawProviderConfig is ProviderConfig's bytes (nil: the provider's defaults).
func (s *Settings) RawProviderConfig() []byte {
	if s.ProviderConfig == nil {
		return nil
	}
	return s.ProviderConfig.Raw
}

// refusedInCopy are the top-level fields of a BackupBucketConfig refused in copy.providerConfig:
// the copy is written by this extension alone, never handed to shoots or to another extension.
var refusedInCopy = []struct{ field, why string }{
	{"copy", "a copy has no copy of its own"},
	{"generatedCredentials", "nobody but this extension writes the copy: no credentials are generated for it"},
	{"entryCredentials", "nobody but this extension writes the copy: no entry credentials are issued for it"},
	{"handBack", "the copy is this extension's alone: there is nothing to hand back"},
	{"backupFreshness", "the copy's lag is judged by copy.rpo"},
}

// storeType is what the copy's settings are validated with for a copy of one type: its strict
// decoding of a BackupBucketConfig (its problems named from "providerConfig" on) and its bucket
// naming rules.
type storeType struct {
	decodeConfig       func([]byte) error
	validateBucketName func(string) error
}

// types are the registered store types (RegisterType), by type.
var types = map[string]storeType{}

// RegisterType registers the provider type typ for a copy of that type (copy.type):
// decodeConfig is its strict decoding of a BackupBucketConfig (its problems named from
// "providerConfig" on) and validateBucketName its bucket naming rules. Each provider's API
// package registers its own type when it is initialized, so that a binary (or the admission)
// validates a copy of every type it links; it is not safe to call after initialization.
func RegisterType(typ string, decodeConfig func([]byte) error, validateBucketName func(string) error) {
	types[typ] = storeType{decodeConfig: decodeConfig, validateBucketName: validateBucketName}
}

// Types returns the registered types, sorted.
func Types() []string {
	out := make([]string, 0, len(types))
	for t := range types {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Validate checks the settings at path (the `copy` field) of a config of the provider type
// primaryType. decodeConfig is that provider's strict decoding of a BackupBucketConfig (its
// problems named from "providerConfig" on) and validateBucketName its bucket naming rules; a copy
// of another type (copy.type) is validated with that type's (RegisterType).
func (s *Settings) Validate(path *field.Path, primaryType string, decodeConfig func([]byte) error, validateBucketName func(string) error) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if s.Type != "" && s.Type != primaryType {
		t, ok := types[s.Type]
		if !ok {
			return append(errs, field.NotSupported(path.Child("type"), s.Type, append([]string{""}, Types()...)))
		}
		decodeConfig, validateBucketName = t.decodeConfig, t.validateBucketName
	}
	if s.CredentialsRef == "" {
		errs = append(errs, field.Required(path.Child("credentialsRef"), "the name of a Secret listed in the Seed's spec.resources (gardenlet copies it into the seed's garden namespace as ref-<name>)"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(s.CredentialsSecret()) {
			errs = append(errs, field.Invalid(path.Child("credentialsRef"), s.CredentialsRef, msg))
		}
	}
	if s.BucketName != "" && validateBucketName != nil {
		if err := validateBucketName(s.BucketName); err != nil {
			errs = append(errs, field.Invalid(path.Child("bucketName"), s.BucketName, err.Error()))
		}
	}
	if d := s.RPO; d != nil && d.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("rpo"), d.Duration.String(), "must be positive"))
	}
	if d := s.Interval; d != nil && d.Duration < time.Minute {
		errs = append(errs, field.Invalid(path.Child("interval"), d.Duration.String(), "must be at least 1m: each pass lists the entry's prefix in both stores"))
	}
	if d, r := s.Interval, s.RPO; d != nil && r != nil && d.Duration > 0 && r.Duration > 0 && d.Duration > r.Duration {
		errs = append(errs, field.Invalid(path.Child("rpo"), r.Duration.String(), "must not be shorter than copy.interval ("+d.Duration.String()+"): every pass would end lagging"))
	}
	errs = append(errs, validateServe(path.Child("serve"), s.Serve, s.Type, primaryType)...)
	errs = append(errs, validateFailover(path.Child("failover"), s.Failover, s.Type, primaryType)...)
	errs = append(errs, validateProviderConfig(path.Child("providerConfig"), s.RawProviderConfig(), decodeConfig)...)
	return errs
}

// validateProviderConfig decodes the copy's providerConfig with the provider's decoding and
// refuses the fields of refusedInCopy, each named at path.
func validateProviderConfig(path *field.Path, raw []byte, decodeConfig func([]byte) error) field.ErrorList {
	if decode.Empty(raw) {
		return nil
	}
	var errs field.ErrorList
	fields := map[string]json.RawMessage{}
	if err := yaml.Unmarshal(raw, &fields); err != nil {
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, "not a JSON or YAML object: "+err.Error())}
	}
	for _, r := range refusedInCopy {
		if _, ok := fields[r.field]; ok {
			errs = append(errs, field.Forbidden(path.Child(r.field), r.why))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	err := decodeConfig(raw)
	if err == nil {
		return nil
	}
	var de *decode.Error
	if !errors.As(err, &de) {
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, err.Error())}
	}
	for _, fe := range de.Errs {
		c := *fe
		if rest, ok := strings.CutPrefix(c.Field, "providerConfig"); ok {
			c.Field = path.String() + rest
		}
		errs = append(errs, &c)
	}
	return errs
}

// CopyField is the `copy:` of every provider's BackupBucket config, inlined in each
// (`copystore.CopyField `+"`"+`json:",inline"`+"`"+`), which so implements Policy.
type CopyField struct {
	// Copy declares a second store each entry's snapshots are copied to (unset: none).
	Copy *Settings `json:"copy,omitempty"`
}

// CopySettings implements Policy.
func (f CopyField) CopySettings() *Settings { return f.Copy }

// Policy is implemented by a provider's decoded BackupBucket config.
type Policy interface {
	// CopySettings returns the config's copy, or nil if it declares none.
	CopySettings() *Settings
}
