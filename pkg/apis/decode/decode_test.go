// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package decode_test

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

type inlined struct {
	Flag  bool     `json:"flag,omitempty"`
	Names []string `json:"names,omitempty"`
}

type named struct {
	Count int `json:"count"`
}

type config struct {
	metav1.TypeMeta `json:",inline"`
	inlined         `json:",inline"`

	Nested *struct {
		Period metav1.Duration   `json:"period"`
		Labels map[string]string `json:"labels,omitempty"`
	} `json:"nested,omitempty"`
	Named named `json:"named"`
}

func validate(*config, *field.Path) field.ErrorList { return nil }

func TestProviderConfigNamesEveryProblemByItsPath(t *testing.T) {
	const head = "apiVersion: x/v1\nkind: Config\n"
	cases := []struct {
		name, raw, want string
	}{
		{"unparseable duration", head + "nested: {period: forever}", `providerConfig.nested.period: Invalid value: "forever": must be a duration`},
		{"duration of the wrong type", head + "nested: {period: 5}", "providerConfig.nested.period: Invalid value: 5: must be a duration string"},
		{"string for a bool of an inlined struct", head + "flag: yes-please", `providerConfig.flag: Invalid value: "yes-please": a JSON string was given; it must be true or false`},
		{"string for a list", head + "names: a", "providerConfig.names: Invalid value: \"a\": a JSON string was given; it must be a list"},
		{"number in a list of strings", head + "names: [a, 1]", "providerConfig.names[1]: Invalid value: 1: a JSON number was given; it must be a string"},
		{"map value of the wrong type", head + "nested: {period: 24h, labels: {team: [x]}}", `providerConfig.nested.labels[team]: Invalid value: ["x"]: a JSON list was given; it must be a string`},
		{"bool for an object", head + "named: true", "providerConfig.named: Invalid value: true: a JSON boolean was given; it must be an object"},
		{"string for a number", head + "named: {count: many}", `providerConfig.named.count: Invalid value: "many": a JSON string was given; it must be a number`},
		{"unknown field", head + "nested: {period: 24h, extra: 1}", `providerConfig: Invalid value: unknown field "nested.extra"`},
		{"wrong kind", "apiVersion: x/v1\nkind: Other\n", `providerConfig.kind: Unsupported value: "Other"`},
		{"not YAML", "{", "providerConfig: Invalid value: not valid JSON or YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decode.ProviderConfig[config](([]byte)(c.raw), "Config", validate, "x/v1")
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got %v; want ErrInvalidConfig beginning %q", err, c.want)
			}
			under := decode.Under(err, "spec")
			if !errors.Is(under, objectstore.ErrInvalidConfig) || !strings.HasPrefix(under.Error(), "spec."+c.want) {
				t.Fatalf("under spec: %v; want it to begin with spec.%s", under, c.want)
			}
		})
	}
	if _, err := decode.ProviderConfig[config]([]byte(head+"flag: true\nnames: [a]\nnested: {period: 48h, labels: {a: b}}\nnamed: {count: 2}"), "Config", validate, "x/v1"); err != nil {
		t.Fatalf("a valid config: %v", err)
	}
}
