// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// SwiftConsumer is how etcd-druid runs etcd-backup-restore for an openstack entry:
// OPENSTACK_APPLICATION_CREDENTIALS at the mounted secret, nothing else (the sidecar reads
// Keystone's URL from the secret and takes Swift's endpoint from the catalog).
var SwiftConsumer = stack.Consumer{StorageProvider: "Swift", CredentialsEnv: "OPENSTACK_APPLICATION_CREDENTIALS"}
