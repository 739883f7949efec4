// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command gardener-extension-backup-local runs the BackupBucket and BackupEntry controllers for
// directories on the filesystem (Gardener's local setup; not for production). Beside the common
// flags it has --local-root and --local-host-path (the local provider's Flags).
package main

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/stores"
)

func main() { app.Main(provider.Register(&local.Provider{}), stores.Copies()...) }
