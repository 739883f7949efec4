// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package all_test

import (
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/badinput"
)

// TestFreshnessDecodes: every registered provider's API decodes the backupFreshness its config
// inlines (freshness.Field) into FreshnessSettings; absent, there are none. Its wrong inputs are
// badinput.Shared's rows.
func TestFreshnessDecodes(t *testing.T) {
	cases := []struct {
		name, raw   string
		full, delta time.Duration // 0: unset
		none        bool
	}{
		{name: "full and delta", raw: "backupFreshness:\n  fullSnapshotMaxAge: 25h\n  deltaSnapshotMaxAge: 30m\n", full: 25 * time.Hour, delta: 30 * time.Minute},
		{name: "full only", raw: "backupFreshness:\n  fullSnapshotMaxAge: 48h\n", full: 48 * time.Hour},
		{name: "none", raw: "", none: true},
	}
	age := func(d *freshness.Settings, full bool) time.Duration {
		p := d.DeltaSnapshotMaxAge
		if full {
			p = d.FullSnapshotMaxAge
		}
		if p == nil {
			return 0
		}
		return p.Duration
	}
	for typ, api := range all.APIs() {
		for _, c := range cases {
			t.Run(typ+"/"+c.name, func(t *testing.T) {
				cfg, err := api.DecodeBucketConfig([]byte(badinput.Head(typ) + c.raw))
				if err != nil {
					t.Fatal(err)
				}
				s := cfg.FreshnessSettings()
				switch {
				case c.none && s != nil:
					t.Fatalf("backupFreshness %+v from a config without it", s)
				case c.none:
				case s == nil || age(s, true) != c.full || age(s, false) != c.delta:
					t.Fatalf("backupFreshness %+v; want full %s, delta %s", s, c.full, c.delta)
				}
			})
		}
	}
}
