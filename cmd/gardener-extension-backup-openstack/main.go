// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command gardener-extension-backup-openstack runs the BackupBucket and BackupEntry controllers
// for OpenStack Swift.
package main

import (
	"os"

	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

func main() {
	if err := app.NewCommand(provider.Register(&openstack.Provider{})).ExecuteContext(signals.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
