// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package decode

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	durationType    = reflect.TypeFor[metav1.Duration]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// checkValues walks the JSON document along obj's Go type and reports, each with its field path,
// what the decoding would refuse without saying where: a value of the wrong JSON type, and a
// duration that does not parse. Syntax errors and unknown fields are the strict decoding's.
func checkValues(js []byte, obj any, path *field.Path) field.ErrorList {
	var doc any
	if json.Unmarshal(js, &doc) != nil {
		return nil
	}
	return walk(doc, reflect.TypeOf(obj), path)
}

func walk(v any, t reflect.Type, path *field.Path) field.ErrorList {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil
	}
	if t == durationType {
		s, ok := v.(string)
		if !ok {
			return field.ErrorList{field.Invalid(path, v, "must be a duration string such as 24h, 96h or 720h")}
		}
		if _, err := time.ParseDuration(s); err != nil {
			return field.ErrorList{field.Invalid(path, s, "must be a duration such as 24h, 96h or 720h (units h, m, s)")}
		}
		return nil
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // decodes itself; the strict decoding reports it
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return wrongType(path, v, "an object")
		}
		var errs field.ErrorList
		for _, f := range reflect.VisibleFields(t) {
			name, inline := jsonName(f)
			if name == "" || inline || !promotedByJSON(t, f) {
				continue // unexported, skipped, or an inlined struct whose fields are visited themselves
			}
			if val, ok := m[name]; ok {
				errs = append(errs, walk(val, f.Type, path.Child(name))...)
			}
		}
		return errs
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return wrongType(path, v, "an object")
		}
		var errs field.ErrorList
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		}) {
			errs = append(errs, walk(m[k], t.Elem(), path.Key(k))...)
		}
		return errs
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return wantJSON[string](path, v, "a string")
		}
		l, ok := v.([]any)
		if !ok {
			return wrongType(path, v, "a list")
		}
		var errs field.ErrorList
		for i, e := range l {
			errs = append(errs, walk(e, t.Elem(), path.Index(i))...)
		}
		return errs
	case reflect.String:
		return wantJSON[string](path, v, "a string")
	case reflect.Bool:
		return wantJSON[bool](path, v, "true or false")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return wantJSON[float64](path, v, "a number")
	}
	return nil
}

func wantJSON[T any](path *field.Path, v any, what string) field.ErrorList {
	if _, ok := v.(T); ok {
		return nil
	}
	return wrongType(path, v, what)
}

func wrongType(path *field.Path, v any, what string) field.ErrorList {
	return field.ErrorList{field.Invalid(path, v, fmt.Sprintf("a JSON %s was given; it must be %s", jsonKindOf(v), what))}
}

func jsonKindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		return "number"
	}
	return "value"
}

// jsonName is a struct field's JSON name, "" for a field JSON skips; inline is true for an
// embedded struct whose fields JSON promotes.
func jsonName(f reflect.StructField) (name string, inline bool) {
	if !f.IsExported() && !f.Anonymous {
		return "", false
	}
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch {
	case tag == "-":
		return "", false
	case tag == "" && f.Anonymous:
		return "", true
	case tag == "":
		return f.Name, false
	}
	return tag, false
}

// promotedByJSON reports whether JSON sees f at t's level: every struct it is embedded through
// is inlined (anonymous, without a JSON name).
func promotedByJSON(t reflect.Type, f reflect.StructField) bool {
	for i := 1; i < len(f.Index); i++ {
		outer := t.FieldByIndex(f.Index[:i])
		if _, inline := jsonName(outer); !inline {
			return false
		}
	}
	return true
}
