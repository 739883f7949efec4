// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package app

import (
	"os"

	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Main is a provider binary's main: NewCommand(p, copyStores...) until SIGTERM or SIGINT stops
// it. It exits with 1 on an error, which cobra has printed.
func Main(p provider.Provider, copyStores ...provider.Provider) {
	if err := NewCommand(p, copyStores...).ExecuteContext(signals.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
