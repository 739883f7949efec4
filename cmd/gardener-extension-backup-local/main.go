// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command gardener-extension-backup-local runs the BackupBucket and BackupEntry controllers for
// directories on the filesystem (Gardener's local setup; not for production). Beside the common
// flags it has --local-root and --local-host-path (local.BindFlags).
package main

import (
	"os"

	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
)

func main() {
	p := &local.Provider{}
	cmd := app.NewCommand(provider.Register(p))
	local.BindFlags(cmd, p)
	if err := cmd.ExecuteContext(signals.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
