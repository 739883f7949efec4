// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package freshness_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
)

func d(v time.Duration) *metav1.Duration { return &metav1.Duration{Duration: v} }

func TestValidate(t *testing.T) {
	path := field.NewPath("providerConfig", "backupFreshness")
	cases := []struct {
		name string
		s    *freshness.Settings
		want []string // one substring per expected error, in order; none: valid
	}{
		{name: "unset", s: nil},
		{name: "empty", s: &freshness.Settings{}},
		{name: "both", s: &freshness.Settings{FullSnapshotMaxAge: d(25 * time.Hour), DeltaSnapshotMaxAge: d(time.Hour)}},
		{name: "equal", s: &freshness.Settings{FullSnapshotMaxAge: d(time.Hour), DeltaSnapshotMaxAge: d(time.Hour)}},
		{name: "full only", s: &freshness.Settings{FullSnapshotMaxAge: d(48 * time.Hour)}},
		{name: "delta only, longer than the default full age", s: &freshness.Settings{DeltaSnapshotMaxAge: d(30 * time.Hour)}},
		{name: "zero full", s: &freshness.Settings{FullSnapshotMaxAge: d(0)},
			want: []string{`providerConfig.backupFreshness.fullSnapshotMaxAge: Invalid value: "0s": must be positive`}},
		{name: "negative delta", s: &freshness.Settings{DeltaSnapshotMaxAge: d(-time.Hour)},
			want: []string{`providerConfig.backupFreshness.deltaSnapshotMaxAge: Invalid value: "-1h0m0s": must be positive`}},
		{name: "delta longer than full", s: &freshness.Settings{FullSnapshotMaxAge: d(time.Hour), DeltaSnapshotMaxAge: d(2 * time.Hour)},
			want: []string{`providerConfig.backupFreshness.deltaSnapshotMaxAge: Invalid value: "2h0m0s": must not be longer than fullSnapshotMaxAge (1h0m0s)`}},
		{name: "both negative: no comparison", s: &freshness.Settings{FullSnapshotMaxAge: d(-2 * time.Hour), DeltaSnapshotMaxAge: d(-time.Hour)},
			want: []string{"fullSnapshotMaxAge", "deltaSnapshotMaxAge"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := c.s.Validate(path)
			if len(errs) != len(c.want) {
				t.Fatalf("got %v; want %d errors %q", errs, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d is %q; want it to contain %q", i, errs[i].Error(), w)
				}
			}
		})
	}
}

// config inlines the field as every provider's BackupBucket config does.
type config struct {
	freshness.Field `json:",inline"`

	Other string `json:"other"`
}

// A config that inlines Field is a Policy by its own type, with no assertion on an interface.
var _ freshness.Policy = (*config)(nil)

func TestFieldFreshnessSettings(t *testing.T) {
	s := &freshness.Settings{FullSnapshotMaxAge: d(time.Hour)}
	var p freshness.Policy = &config{Field: freshness.Field{BackupFreshness: s}}
	if got := p.FreshnessSettings(); got != s {
		t.Fatalf("got %v; want the config's settings", got)
	}
	if got := (&config{}).FreshnessSettings(); got != nil {
		t.Fatalf("got %v for a config without settings", got)
	}
}
