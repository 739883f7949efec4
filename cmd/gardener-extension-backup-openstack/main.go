// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command gardener-extension-backup-openstack runs the BackupBucket and BackupEntry controllers
// for OpenStack Swift.
package main

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/stores"
)

func main() { app.Main(provider.Register(&openstack.Provider{}), stores.Copies()...) }
