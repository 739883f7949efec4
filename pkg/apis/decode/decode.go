// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package decode is the strict providerConfig decoding every provider API shares: JSON or YAML,
// unknown fields refused with their path, values of the wrong type and unparseable durations
// named by their path, apiVersion and kind checked, errors matching objectstore.ErrInvalidConfig.
package decode

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Object is a typed providerConfig with apiVersion and kind.
type Object interface {
	GetObjectKind() schema.ObjectKind
}

// Error is an invalid configuration: every problem with its field path. Its message is the
// problems' own, "<field path>: <what is wrong>", and it matches objectstore.ErrInvalidConfig.
type Error struct {
	Errs field.ErrorList
}

func (e *Error) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, fe := range e.Errs {
		msgs[i] = fe.Error()
	}
	return strings.Join(msgs, "; ")
}

// Is makes errors.Is(err, objectstore.ErrInvalidConfig) true.
func (e *Error) Is(target error) bool { return target == objectstore.ErrInvalidConfig }

// Under returns err with the field paths of an *Error put under root, so that a config decoded
// as "providerConfig" is reported where it lives, for example "spec.providerConfig" of a
// BackupBucket or "spec.backup.providerConfig" of a Seed. Other errors are returned as they are.
func Under(err error, root string) error {
	return mapErrors(err, func(fe field.Error) field.Error {
		// A seed configuration's problems are already named where it lives (WithSeedConfig).
		if strings.HasPrefix(fe.Field, "providerConfig") {
			fe.Field = root + "." + fe.Field
		}
		return fe
	})
}

// Invalid returns a validation error list as an *Error (nil for none).
func Invalid(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return &Error{Errs: errs}
}

// Strict decodes raw into obj, refusing unknown fields and any apiVersion not in apiVersions or
// any kind but kind. path is the field path errors are reported under (e.g. "providerConfig").
func Strict(raw []byte, obj Object, path *field.Path, kind string, apiVersions ...string) error {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return Invalid(field.ErrorList{field.Invalid(path, field.OmitValueType{}, "not valid JSON or YAML: "+err.Error())})
	}
	// The strict decoding names neither the path of an unparseable duration nor, for a value of
	// the wrong type, anything but Go names: these are found first, each with its path.
	if errs := checkValues(js, obj, path); len(errs) > 0 {
		return Invalid(errs)
	}
	strict, err := sigsjson.UnmarshalStrict(js, obj)
	if err != nil {
		return Invalid(field.ErrorList{field.Invalid(path, field.OmitValueType{}, err.Error())})
	}
	if len(strict) > 0 {
		errs := make(field.ErrorList, len(strict))
		for i, e := range strict {
			errs[i] = field.Invalid(path, field.OmitValueType{}, e.Error())
		}
		return Invalid(errs)
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if v := gvk.GroupVersion().String(); !slices.Contains(apiVersions, v) {
		return Invalid(field.ErrorList{field.NotSupported(path.Child("apiVersion"), v, apiVersions)})
	}
	if gvk.Kind != kind {
		return Invalid(field.ErrorList{field.NotSupported(path.Child("kind"), gvk.Kind, []string{kind})})
	}
	return nil
}

// Empty reports whether raw holds no config at all.
func Empty(raw []byte) bool { return len(strings.TrimSpace(string(raw))) == 0 }

// ProviderConfig strictly decodes a providerConfig (JSON or YAML) of the given kind into a new T
// under the path "providerConfig" and validates it; empty input gives T's zero value, the
// provider's defaults. Errors are *Error, naming the field path.
func ProviderConfig[T any, PT interface {
	*T
	Object
}](raw []byte, kind string, validate func(PT, *field.Path) field.ErrorList, apiVersions ...string) (PT, error) {
	cfg := PT(new(T))
	if Empty(raw) {
		return cfg, nil
	}
	path := field.NewPath("providerConfig")
	if err := Strict(raw, cfg, path, kind, apiVersions...); err != nil {
		return nil, err
	}
	if err := Invalid(validate(cfg, path)); err != nil {
		return nil, err
	}
	return cfg, nil
}
