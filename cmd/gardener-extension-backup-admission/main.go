// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command gardener-extension-backup-admission validates, in the garden cluster, the backup
// providerConfig of core BackupBuckets and Seeds for every provider, with the providers' SDK-free
// APIs: no cloud SDK is linked into it.
package main

import (
	"os"

	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/admission"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
)

func main() {
	if err := admission.NewCommand(admission.Validator{APIs: all.APIs()}).ExecuteContext(signals.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
