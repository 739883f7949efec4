// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package decode

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// SeedConfigAnnotation is the Seed annotation that holds this extension's seed configuration: a
// BackupBucketConfig of the seed's backup provider, in this extension's apiVersion, merged into
// the Seed's spec.backup.providerConfig. It exists because the provider extensions keep running
// their admission for Seeds and BackupBuckets after their backup controllers are switched off
// (provider-aws v1.73.0 pkg/admission/validator/seed.go, provider-gcp v1.53.4 and provider-azure
// v1.62.1 the same), and decode the providerConfig strictly with their own scheme: the
// providerConfig can hold only their apiVersion and fields, so everything else lives here, where
// no incumbent looks. See docs/migrating.md, "Where this extension's settings live".
const SeedConfigAnnotation = "backup.extensions.gardener.cloud/config"

// seedConfigRoot is where a seed configuration's problems are reported: where it lives, the
// Seed's annotation (Under leaves such paths as they are).
var seedConfigRoot = field.NewPath("metadata", "annotations").Key(SeedConfigAnnotation).String()

// mergedNote is added to a problem that only the merged document has (for example two fields
// that exclude each other, one in each place).
const mergedNote = " (the Seed's spec.backup.providerConfig merged with the seed configuration, annotation " + SeedConfigAnnotation + ")"

// WithSeedConfig decodes, with a provider's strict decoding decodeFn, the providerConfig merged
// with the seed configuration (SeedConfigAnnotation); without a seed configuration it is
// decodeFn(providerConfig), unchanged.
//
// Each document must decode on its own; the merged document is the union of their top-level
// fields, and must decode too. Precedence: there is none to guess: a top-level field set in both
// with different values is refused (objectstore.ErrInvalidConfig naming both places), so that
// nobody reads a providerConfig that says one thing while another applies; set in both with the
// same value, it is that value. The merged document's apiVersion is the seed configuration's.
// The incumbent's own fields (incumbentFields, of gardener-extension-provider-<typ>) are
// refused in the seed configuration: they stay in the providerConfig, where that extension's
// admission checks them and its webhooks and controllers read them. Errors of the seed
// configuration are named from metadata.annotations[<SeedConfigAnnotation>] on. On an error the returned C is not
// to be used.
func WithSeedConfig[C any](decodeFn func([]byte) (C, error), providerConfig, seedConfig []byte, typ string, incumbentFields []string) (C, error) {
	if Empty(seedConfig) {
		return decodeFn(providerConfig)
	}
	if err := refuseIncumbentFields(seedConfig, "gardener-extension-provider-"+typ, incumbentFields); err != nil {
		var zero C
		return zero, err
	}
	if cfg, err := decodeFn(seedConfig); err != nil {
		return cfg, renameRoot(err, seedConfigRoot)
	}
	if Empty(providerConfig) {
		return decodeFn(seedConfig)
	}
	if cfg, err := decodeFn(providerConfig); err != nil {
		return cfg, err
	}
	merged, err := merge(providerConfig, seedConfig)
	if err != nil {
		var zero C
		return zero, err
	}
	cfg, err := decodeFn(merged)
	if err != nil {
		return cfg, annotate(err, mergedNote)
	}
	return cfg, nil
}

func refuseIncumbentFields(seedConfig []byte, incumbent string, fields []string) error {
	sc, err := object(seedConfig)
	if err != nil {
		return renameRoot(err, seedConfigRoot)
	}
	var errs field.ErrorList
	for _, f := range fields {
		if _, ok := sc[f]; ok {
			errs = append(errs, field.Forbidden(field.NewPath(seedConfigRoot, f), "is a field of "+incumbent+
				"'s own API: set it in the Seed's spec.backup.providerConfig, where that extension's admission checks it and its webhooks and controllers read it"))
		}
	}
	return Invalid(errs)
}

// merge is the union of two documents' top-level fields, refusing a field the two set to
// different values. Both have been decoded strictly before, so both are JSON or YAML objects.
func merge(providerConfig, seedConfig []byte) ([]byte, error) {
	pc, err := object(providerConfig)
	if err != nil {
		return nil, err
	}
	sc, err := object(seedConfig)
	if err != nil {
		return nil, err
	}
	path := field.NewPath("providerConfig")
	var errs field.ErrorList
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range sc {
			if !yield(k) {
				return
			}
		}
	}) {
		v := sc[k]
		if old, ok := pc[k]; ok && k != "apiVersion" && k != "kind" && !reflect.DeepEqual(old, v) {
			errs = append(errs, field.Invalid(path.Child(k), field.OmitValueType{},
				"is also set by the seed configuration (annotation "+SeedConfigAnnotation+") to another value: set a field in one place (or to the same value in both)"))
		}
		pc[k] = v
	}
	if len(errs) > 0 {
		return nil, Invalid(errs)
	}
	return json.Marshal(pc)
}

func object(raw []byte) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return nil, Invalid(field.ErrorList{field.Invalid(field.NewPath("providerConfig"), field.OmitValueType{}, "not a JSON or YAML object: "+err.Error())})
	}
	return m, nil
}

// renameRoot returns err with the root of its field paths ("providerConfig") replaced by root.
func renameRoot(err error, root string) error {
	return mapErrors(err, func(fe field.Error) field.Error {
		if rest, ok := strings.CutPrefix(fe.Field, "providerConfig"); ok {
			fe.Field = root + rest
		}
		return fe
	})
}

func annotate(err error, note string) error {
	return mapErrors(err, func(fe field.Error) field.Error {
		fe.Detail += note
		return fe
	})
}

// mapErrors applies f to every problem of an *Error; other errors are returned as they are.
func mapErrors(err error, f func(field.Error) field.Error) error {
	var de *Error
	if !errors.As(err, &de) {
		return err
	}
	errs := make(field.ErrorList, len(de.Errs))
	for i, fe := range de.Errs {
		c := f(*fe)
		errs[i] = &c
	}
	return &Error{Errs: errs}
}
