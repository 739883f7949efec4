// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package app_test

import (
	"io"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
)

// TestTheCommandTakesTheProvidersFlags: a provider's own flags (provider.Provider.Flags) are the
// command's, parsed into the registered provider, and a wrong one stops the command before
// anything starts (before the kubeconfig is read), naming the flag; a provider without flags adds
// none.
func TestTheCommandTakesTheProvidersFlags(t *testing.T) {
	root := t.TempDir()
	p := &local.Provider{}
	cmd := app.NewCommand(provider.Register(p))
	for _, name := range []string{local.FlagRoot, local.FlagHostPath, "deletion-parallelism"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("the local command has no --%s", name)
		}
	}
	if err := cmd.ParseFlags([]string{"--" + local.FlagRoot, root}); err != nil {
		t.Fatal(err)
	}
	if p.Root != root {
		t.Errorf("--%s %s parsed into the provider's Root %q", local.FlagRoot, root, p.Root)
	}

	cmd = app.NewCommand(provider.Register(&local.Provider{}))
	cmd.SetArgs([]string{"--" + local.FlagRoot, "relative/dir", "--kubeconfig", "/nonexistent/kubeconfig"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--"+local.FlagRoot+" must be an absolute directory") {
		t.Errorf("a relative --%s: %v; want the start refused naming the flag", local.FlagRoot, err)
	}

	if f := app.NewCommand(provider.Register(controllertest.Provider{})).Flags().Lookup(local.FlagRoot); f != nil {
		t.Errorf("a provider without flags of its own got --%s", f.Name)
	}
}
