// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack

import (
	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
)

// EtcdStoreEndpoint implements provider.Cloud: none. The secret's authURL is Keystone's, not the
// object store's (Swift's endpoint comes from Keystone's catalog), and etcd-backup-restore's
// Swift store does not read --store-endpoint-override (v0.43.0 and v0.44.1
// pkg/snapstore/swift_snapstore.go).
func (*Provider) EtcdStoreEndpoint(*osapi.BackupBucketConfig, map[string][]byte) (string, error) {
	return "", nil
}
