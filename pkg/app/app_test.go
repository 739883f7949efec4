// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package app_test

import (
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestPeriodicFlagsKeepTheirNamesAndDefaults: the periodic controllers' flags, which the chart
// passes (charts/gardener-extension-backup/templates/deployment.yaml), are bound by their options
// with the names and defaults they had in pkg/app.
func TestPeriodicFlagsKeepTheirNamesAndDefaults(t *testing.T) {
	cmd := app.NewCommand(provider.Register(controllertest.Provider{}))
	for name, def := range map[string]string{
		"bucket-probe-interval":           "5m0s",
		"entry-inventory-interval":        "30m0s",
		"full-snapshot-max-age":           "25h0m0s",
		"delta-snapshot-max-age":          "1h0m0s",
		"restore-drill-interval":          "24h0m0s",
		"restore-drill-concurrency":       "1",
		"restore-drill-max-bytes":         "8589934592",
		"restore-drill-max-scratch-bytes": "0",
		"restore-drill-read-rate":         "52428800",
		"restore-drill-scratch-dir":       "",
	} {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			t.Errorf("--%s is not a flag", name)
			continue
		}
		if f.DefValue != def {
			t.Errorf("--%s defaults to %q; want %q", name, f.DefValue, def)
		}
	}
}

// TestPeriodicFlagsOutOfRangeStopTheStart: a value out of range stops the command before it
// connects anywhere, with the flag named.
func TestPeriodicFlagsOutOfRangeStopTheStart(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"--bucket-probe-interval=-1s", "--bucket-probe-interval must not be negative"},
		{"--entry-inventory-interval=-1s", "--entry-inventory-interval must not be negative"},
		{"--full-snapshot-max-age=0s", "--full-snapshot-max-age and --delta-snapshot-max-age must be positive"},
		{"--delta-snapshot-max-age=-1h", "--full-snapshot-max-age and --delta-snapshot-max-age must be positive"},
		{"--restore-drill-interval=-1s", "--restore-drill-interval must not be negative"},
		{"--restore-drill-concurrency=0", "--restore-drill-concurrency must be at least 1"},
		{"--restore-drill-max-bytes=-1", "--restore-drill-max-bytes must not be negative"},
		{"--restore-drill-max-scratch-bytes=-1", "--restore-drill-max-scratch-bytes must not be negative"},
		{"--restore-drill-read-rate=-1", "--restore-drill-read-rate must not be negative"},
	} {
		cmd := app.NewCommand(provider.Register(controllertest.Provider{}))
		cmd.SetArgs([]string{c.arg})
		cmd.SetOut(new(strings.Builder))
		cmd.SetErr(new(strings.Builder))
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error containing %q", c.arg, err, c.want)
		}
	}
}

// TestControllersFlag: --controllers defaults to all (one process runs everything, as the demo
// and tests start it), and a value that is not all, core or restore-drill stops the start, named.
func TestControllersFlag(t *testing.T) {
	cmd := app.NewCommand(provider.Register(controllertest.Provider{}))
	f := cmd.Flags().Lookup("controllers")
	if f == nil || f.DefValue != string(app.ControllersAll) {
		t.Fatalf("--controllers %+v; want a flag defaulting to %s", f, app.ControllersAll)
	}
	for _, ok := range []app.Controllers{app.ControllersAll, app.ControllersCore, app.ControllersRestoreDrill} {
		if err := cmd.Flags().Set("controllers", string(ok)); err != nil {
			t.Errorf("--controllers=%s: %v", ok, err)
		}
	}
	cmd = app.NewCommand(provider.Register(controllertest.Provider{}))
	cmd.SetArgs([]string{"--controllers=drill"})
	cmd.SetOut(new(strings.Builder))
	cmd.SetErr(new(strings.Builder))
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--controllers") || !strings.Contains(err.Error(), "restore-drill") {
		t.Errorf("--controllers=drill: %v; want the start refused naming the flag and its values", err)
	}
}
