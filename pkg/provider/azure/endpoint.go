// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure

import (
	"net"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
)

// EtcdStoreEndpoint implements provider.Cloud: the account's blob endpoint
// https://<storageAccount>.<domain> where the etcd-backup secret's domain is not Azure's public
// one, which is the URL etcd-backup-restore builds from the secret itself (v0.43.0
// pkg/snapstore/abs_snapstore.go:111-117) and joins the container to when given the flag
// (:120-125). None for the public cloud (the sidecar's default) and none for an emulator's
// host:port, whose path-style plain-http URL the secret does not hold (emulatorEnabled is not
// passed on).
func (*Provider) EtcdStoreEndpoint(_ *azureapi.BackupBucketConfig, etcdBackup map[string][]byte) (string, error) {
	a, err := parseAccount(etcdBackup)
	if err != nil {
		return "", err
	}
	if a.domain == DefaultDomain {
		return "", nil
	}
	if _, _, err := net.SplitHostPort(a.domain); err == nil {
		return "", nil
	}
	return "https://" + a.name + "." + a.domain, nil
}
