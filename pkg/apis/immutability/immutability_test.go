// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package immutability_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/immutability"
)

func TestValidate(t *testing.T) {
	path := field.NewPath("providerConfig", "immutability")
	seconds := immutability.Period{Min: 24 * time.Hour, Max: 100 * 24 * time.Hour, Unit: time.Second, Rule: "must be whole seconds"}
	for _, tc := range []struct {
		name          string
		retentionType string
		period        time.Duration
		allowed       immutability.Period
		want          []string
	}{
		{"one day", "bucket", 24 * time.Hour, immutability.WholeDays, nil},
		{"many days", "bucket", 365 * 24 * time.Hour, immutability.WholeDays, nil},
		{"part of a day", "bucket", 36 * time.Hour, immutability.WholeDays,
			[]string{`providerConfig.immutability.retentionPeriod: Invalid value: "36h0m0s": must be a whole number of days (a multiple of 24h), at least 24h`}},
		{"less than a day", "bucket", time.Hour, immutability.WholeDays,
			[]string{`providerConfig.immutability.retentionPeriod: Invalid value: "1h0m0s": must be a whole number of days (a multiple of 24h), at least 24h`}},
		{"no period", "bucket", 0, immutability.WholeDays,
			[]string{`providerConfig.immutability.retentionPeriod: Invalid value: "0s": must be a whole number of days (a multiple of 24h), at least 24h`}},
		{"whole seconds", "bucket", 25*time.Hour + time.Second, seconds, nil},
		{"at the maximum", "bucket", 100 * 24 * time.Hour, seconds, nil},
		{"above the maximum", "bucket", 100*24*time.Hour + time.Second, seconds,
			[]string{`providerConfig.immutability.retentionPeriod: Invalid value: "2400h0m1s": must be whole seconds`}},
		{"a fraction of a second", "bucket", 25*time.Hour + time.Millisecond, seconds,
			[]string{`providerConfig.immutability.retentionPeriod: Invalid value: "25h0m0.001s": must be whole seconds`}},
		{"another type and period", "object", time.Hour, immutability.WholeDays, []string{
			`providerConfig.immutability.retentionType: Unsupported value: "object": supported values: "bucket"`,
			`providerConfig.immutability.retentionPeriod: Invalid value: "1h0m0s": must be a whole number of days (a multiple of 24h), at least 24h`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := immutability.Validate(path, tc.retentionType, tc.period, tc.allowed)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %v, want %v", errs, tc.want)
			}
			for i, err := range errs {
				if err.Error() != tc.want[i] {
					t.Errorf("error %d: %q, want %q", i, err, tc.want[i])
				}
			}
		})
	}
}
