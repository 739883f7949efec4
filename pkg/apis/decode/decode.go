// Package decode is the strict providerConfig decoding every provider API shares: JSON or YAML,
// unknown fields refused with their path, apiVersion and kind checked, errors wrapping
// objectstore.ErrInvalidConfig.
package decode

import (
	"fmt"
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

// Strict decodes raw into obj, refusing unknown fields and any apiVersion not in apiVersions or
// any kind but kind. path is the field path errors are reported under (e.g. "providerConfig").
func Strict(raw []byte, obj Object, path *field.Path, kind string, apiVersions ...string) error {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return fmt.Errorf("%w: %s: not valid JSON or YAML: %v", objectstore.ErrInvalidConfig, path, err)
	}
	strict, err := sigsjson.UnmarshalStrict(js, obj)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", objectstore.ErrInvalidConfig, path, err)
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("%w: %s: %s", objectstore.ErrInvalidConfig, path, strings.Join(msgs, "; "))
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if v := gvk.GroupVersion().String(); !slices.Contains(apiVersions, v) {
		return fmt.Errorf("%w: %s", objectstore.ErrInvalidConfig, field.NotSupported(path.Child("apiVersion"), v, apiVersions))
	}
	if gvk.Kind != kind {
		return fmt.Errorf("%w: %s", objectstore.ErrInvalidConfig, field.NotSupported(path.Child("kind"), gvk.Kind, []string{kind}))
	}
	return nil
}

// Empty reports whether raw holds no config at all.
func Empty(raw []byte) bool { return len(strings.TrimSpace(string(raw))) == 0 }

// Invalid wraps a validation error list with objectstore.ErrInvalidConfig (nil for none).
func Invalid(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", objectstore.ErrInvalidConfig, errs.ToAggregate())
}

// ProviderConfig strictly decodes a providerConfig (JSON or YAML) of the given kind into a new T
// under the path "providerConfig" and validates it; empty input gives T's zero value, the
// provider's defaults. Errors wrap objectstore.ErrInvalidConfig and name the field path.
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
