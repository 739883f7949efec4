// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command gardener-extension-backup-azure runs the BackupBucket and BackupEntry controllers
// for Azure Blob Storage. Beside the common flags it has the azure ones (azure.CloudOptions):
// --azure-cloud-config and --azure-management-ca-file, read once at start-up.
package main

import (
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
)

func main() {
	p := &azure.Provider{}
	var opts azure.CloudOptions
	cmd := app.NewCommand(provider.Register(p))
	opts.Bind(cmd)
	cmd.PreRunE = func(*cobra.Command, []string) error { return opts.Apply(p) }
	if err := cmd.ExecuteContext(signals.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
