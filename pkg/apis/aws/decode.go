package aws

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// DecodeBackupBucketConfig strictly decodes and validates a BackupBucket providerConfig (JSON or
// YAML). Empty input gives the defaults. Errors wrap objectstore.ErrInvalidConfig and name the
// field path.
func DecodeBackupBucketConfig(raw []byte) (*BackupBucketConfig, error) {
	if err := checkDurations(raw); err != nil {
		return nil, err
	}
	return decode.ProviderConfig(raw, KindBackupBucketConfig, ValidateBackupBucketConfig, APIVersion, ProviderAWSAPIVersion)
}

// durationFields are the providerConfig's durations. JSON decoding reports an unparseable one
// without its path ("time: invalid duration"), so they are checked first, each with its path.
var durationFields = [][]string{
	{"immutability", "retentionPeriod"},
	{"generatedCredentials", "rotation", "period"},
	{"generatedCredentials", "rotation", "gracePeriod"},
}

// checkDurations also reports a value of the wrong JSON type with its path (see below).
func checkDurations(raw []byte) error {
	if decode.Empty(raw) {
		return nil
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil // reported by the strict decoding, with its path
	}
	var doc map[string]any
	if json.Unmarshal(js, &doc) != nil {
		return nil // not an object: reported by the strict decoding
	}
	var errs field.ErrorList
	for _, f := range durationFields {
		path := field.NewPath("providerConfig")
		var v any = doc
		for _, name := range f {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[name]
			path = path.Child(name)
		}
		switch d := v.(type) {
		case nil:
		case string:
			if _, err := time.ParseDuration(d); err != nil {
				errs = append(errs, field.Invalid(path, d, "must be a duration such as 24h, 96h or 720h (units h, m, s)"))
			}
		default:
			errs = append(errs, field.Invalid(path, d, "must be a duration string such as 24h, 96h or 720h"))
		}
	}
	if len(errs) > 0 {
		return decode.Invalid(errs)
	}
	// A value of the wrong JSON type: the strict decoding's message names Go types and, for
	// inlined structs, a Go field name in the path; this one names the field path and what it
	// must be.
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(js, new(BackupBucketConfig)); errors.As(err, &typeErr) && typeErr.Field != "" {
		path := field.NewPath("providerConfig")
		for _, name := range strings.Split(typeErr.Field, ".") {
			if name != "" && unicode.IsLower(rune(name[0])) { // Go names of inlined structs are not part of the path
				path = path.Child(name)
			}
		}
		return decode.Invalid(field.ErrorList{field.Invalid(path, typeErr.Value, fmt.Sprintf("a JSON %s was given; it must be %s", typeErr.Value, jsonKind(typeErr.Type)))})
	}
	return nil
}

// jsonKind says what a Go type is in a providerConfig.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64, reflect.Float64:
		return "a number"
	}
	return "of type " + t.String()
}

// DecodeWorkloadIdentityConfig strictly decodes a workload identity secret's "config" key.
func DecodeWorkloadIdentityConfig(raw []byte) (*WorkloadIdentityConfig, error) {
	cfg := &WorkloadIdentityConfig{}
	if err := decode.Strict(raw, cfg, field.NewPath("config"), KindWorkloadIdentityConfig, APIVersion, ProviderAWSAPIVersion); err != nil {
		return nil, err
	}
	if cfg.RoleARN == "" || !strings.HasPrefix(cfg.RoleARN, "arn:") {
		return nil, fmt.Errorf("%w: %s", objectstore.ErrInvalidConfig, field.Invalid(field.NewPath("config", "roleARN"), cfg.RoleARN, "must be an IAM role ARN"))
	}
	return cfg, nil
}

// ValidateBackupBucketConfig validates a decoded config.
func ValidateBackupBucketConfig(cfg *BackupBucketConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if g := cfg.GeneratedCredentials; g != nil {
		p := path.Child("generatedCredentials")
		if g.Issuer != IssuerIAM && g.Issuer != IssuerMinIO {
			errs = append(errs, field.NotSupported(p.Child("issuer"), g.Issuer, []string{IssuerIAM, IssuerMinIO}))
		}
		errs = append(errs, g.Validate(p)...)
	}
	if im := cfg.Immutability; im != nil {
		p := path.Child("immutability")
		if im.RetentionType != RetentionTypeBucket {
			errs = append(errs, field.NotSupported(p.Child("retentionType"), im.RetentionType, []string{RetentionTypeBucket}))
		}
		if d := im.RetentionPeriod.Duration; d < 24*time.Hour || d%(24*time.Hour) != 0 {
			errs = append(errs, field.Invalid(p.Child("retentionPeriod"), d.String(), "must be a whole number of days (a multiple of 24h), at least 24h"))
		}
		if im.Mode != ModeGovernance && im.Mode != ModeCompliance {
			errs = append(errs, field.NotSupported(p.Child("mode"), im.Mode, []string{ModeGovernance, ModeCompliance}))
		}
	}
	if enc := cfg.Encryption; enc != nil {
		p := path.Child("encryption")
		switch enc.Type {
		case EncryptionSSES3:
			if enc.KMSKeyID != "" {
				errs = append(errs, field.Forbidden(p.Child("kmsKeyID"), "only allowed with type SSE-KMS"))
			}
		case EncryptionSSEKMS:
			if enc.KMSKeyID == "" {
				errs = append(errs, field.Required(p.Child("kmsKeyID"), "required with type SSE-KMS"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), enc.Type, []string{EncryptionSSES3, EncryptionSSEKMS}))
		}
		if cfg.Disabled(SettingDefaultEncryption) {
			errs = append(errs, field.Forbidden(p, "cannot be set while disabledSettings lists DefaultEncryption"))
		}
	}
	seen := map[Setting]bool{}
	for i, s := range cfg.DisabledSettings {
		p := path.Child("disabledSettings").Index(i)
		if !slices.Contains(AllSettings, s) {
			errs = append(errs, field.NotSupported(p, s, AllSettings))
		}
		if seen[s] {
			errs = append(errs, field.Duplicate(p, s))
		}
		seen[s] = true
	}
	return errs
}
