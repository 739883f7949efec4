// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	localapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/local"
)

// EtcdStoreEndpoint implements provider.Cloud: none, a directory has no endpoint.
func (*Provider) EtcdStoreEndpoint(*localapi.BackupBucketConfig, map[string][]byte) (string, error) {
	return "", nil
}
