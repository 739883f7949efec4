// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package decode

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// ExtensionType is the type of the seed's Extension that holds this extension's seed
// configuration for the backup provider typ: a Seed declares it as spec.extensions[{type:
// backup-<typ>, providerConfig: <a BackupBucketConfig of typ>}], and gardenlet turns the entry into
// a seed-class Extension of that name in the seed's garden namespace. It exists because the
// provider extensions keep running their admission for Seeds and BackupBuckets after their backup
// controllers are switched off (provider-aws v1.73.0 pkg/admission/validator/seed.go,
// provider-gcp v1.53.4 and provider-azure v1.62.1 the same) and decode the Seed's
// spec.backup.providerConfig strictly with their own scheme: that providerConfig can hold only
// their apiVersion and fields, so this extension's own live in spec.extensions, which they do not
// read. See docs/migrating.md, "Where this extension's settings live".
func ExtensionType(typ string) string { return "backup-" + typ }

// seedConfigPlace names the seed configuration in the problems of a merged document.
func seedConfigPlace(typ string) string {
	return "the seed configuration (the Seed's spec.extensions[] entry of type " + ExtensionType(typ) + ")"
}

// WithSeedConfig decodes, with a provider's strict decoding decodeFn, the providerConfig merged
// with the seed configuration (the providerConfig of the seed's Extension ExtensionType(typ));
// without a seed configuration it is decodeFn(providerConfig), unchanged.
//
// Each document must decode on its own; the merged document is the union of their top-level
// fields, and must decode too. Precedence: there is none to guess: a top-level field set in both
// with different values is refused (objectstore.ErrInvalidConfig naming both places), so that
// nobody reads a providerConfig that says one thing while another applies; set in both with the
// same value, it is that value. The merged document's apiVersion is the seed configuration's.
// The incumbent's own fields (incumbentFields, of gardener-extension-provider-<typ>) are
// refused in the seed configuration: they stay in the providerConfig, where that extension's
// admission checks them and its webhooks and controllers read them. Problems of the seed
// configuration alone are named from seedConfigAt on, the field path of its providerConfig where
// it lives (for example "spec.providerConfig" of the Extension, or
// "spec.extensions[0].providerConfig" of the Seed); Under leaves such paths as they are. On an
// error the returned C is not to be used.
func WithSeedConfig[C any](decodeFn func([]byte) (C, error), providerConfig, seedConfig []byte, seedConfigAt, typ string, incumbentFields []string) (C, error) {
	if Empty(seedConfig) {
		return decodeFn(providerConfig)
	}
	if err := refuseIncumbentFields(seedConfig, seedConfigAt, "gardener-extension-provider-"+typ, incumbentFields); err != nil {
		var zero C
		return zero, err
	}
	if cfg, err := decodeFn(seedConfig); err != nil {
		return cfg, renameRoot(err, seedConfigAt)
	}
	if Empty(providerConfig) {
		return decodeFn(seedConfig)
	}
	if cfg, err := decodeFn(providerConfig); err != nil {
		return cfg, err
	}
	merged, err := merge(providerConfig, seedConfig, seedConfigPlace(typ))
	if err != nil {
		var zero C
		return zero, err
	}
	cfg, err := decodeFn(merged)
	if err != nil {
		return cfg, annotate(err, " (the providerConfig merged with "+seedConfigPlace(typ)+")")
	}
	return cfg, nil
}

// Overlay returns the seed configuration in force: defaults (the landscape's, from the
// ControllerDeployment's values) with every top-level field that seedConfig (a seed's Extension)
// sets replaced by seedConfig's value; the seed's Extension overrides the landscape's defaults,
// field by field at the top level, and its apiVersion and kind are the result's. Both must be
// JSON or YAML objects; either may be empty. The result is not decoded: callers decode it (and
// each part on its own first, to name a problem where it lives).
func Overlay(defaults, seedConfig []byte) ([]byte, error) {
	switch {
	case Empty(seedConfig):
		return defaults, nil
	case Empty(defaults):
		return seedConfig, nil
	}
	d, err := object(defaults)
	if err != nil {
		return nil, err
	}
	sc, err := object(seedConfig)
	if err != nil {
		return nil, err
	}
	maps.Copy(d, sc)
	return json.Marshal(d)
}

func refuseIncumbentFields(seedConfig []byte, seedConfigAt, incumbent string, fields []string) error {
	sc, err := object(seedConfig)
	if err != nil {
		return renameRoot(err, seedConfigAt)
	}
	var errs field.ErrorList
	for _, f := range fields {
		if _, ok := sc[f]; ok {
			errs = append(errs, field.Forbidden(field.NewPath(seedConfigAt, f), "is a field of "+incumbent+
				"'s own API: set it in the Seed's spec.backup.providerConfig, where that extension's admission checks it and its webhooks and controllers read it"))
		}
	}
	return Invalid(errs)
}

// merge is the union of two documents' top-level fields, refusing a field the two set to
// different values. Both have been decoded strictly before, so both are JSON or YAML objects.
func merge(providerConfig, seedConfig []byte, place string) ([]byte, error) {
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
				"is also set by "+place+" to another value: set a field in one place (or to the same value in both)"))
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
