// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// Binary is an extension binary running as a process (as the chart runs it) on envtest, with an
// Env attached to it.
type Binary struct {
	*Env

	// Path is the binary built; Ext the process; TestEnv the API server it runs against (for a
	// second process).
	Path    string
	Ext     *stack.Extension
	TestEnv *envtest.Environment
}

// StartBinary builds c's binary into dir, starts envtest and the binary on it with flags (dir its
// working directory), and attaches an Env of c in region. The binary's log is shown when t fails;
// everything stops when t ends.
func StartBinary[C config.ProviderConfig](t *testing.T, ctx context.Context, c provider.TestCloud[C], region, dir string, flags ...string) *Binary {
	t.Helper()
	binary, err := stack.BuildBinary(dir, c.Type())
	if err != nil {
		t.Fatal(err)
	}
	testEnv, cfg, err := stack.StartEnvtest()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testEnv.Stop() })
	ext, err := stack.StartExtension(ctx, testEnv, binary, dir, flags...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ext.Stop()
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Clean(ext.LogPath)); err == nil {
				t.Logf("extension log:\n%s", log)
			}
		}
	})
	scheme, err := app.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &Binary{Env: Attach(k8s, c, region), Path: binary, Ext: ext, TestEnv: testEnv}
}
