// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command gardener-extension-backup-azure runs the BackupBucket and BackupEntry controllers
// for Azure Blob Storage. Beside the common flags it has the azure ones (the azure provider's
// Flags, CloudOptions): --azure-cloud-config and --azure-management-ca-file, read once at start-up.
package main

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/stores"
)

func main() { app.Main(provider.Register(&azure.Provider{}), stores.Copies()...) }
