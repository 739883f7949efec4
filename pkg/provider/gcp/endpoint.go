// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
)

// EtcdStoreEndpoint implements provider.Cloud: the bucket's providerConfig store.endpointOverride
// where it sets one (provider-gcp's field, which provider-gcp's own seed webhook copies into the
// Etcd: agreeing with it keeps the result the same whichever webhook runs last), else the
// etcd-backup secret's storageAPIEndpoint. etcd-backup-restore gives either to the storage client
// as its endpoint (v0.43.0 pkg/snapstore/gcs_snapstore.go:87-98, the flag taking precedence over
// the key, and configureClientOptions at :115).
func (*Provider) EtcdStoreEndpoint(cfg *gcpapi.BackupBucketConfig, etcdBackup map[string][]byte) (string, error) {
	if ep := cfg.StoreEndpointOverride(); ep != "" {
		return ep, nil
	}
	return storageEndpointOf(etcdBackup)
}

// storageEndpointOf is the etcd-backup secret's storageAPIEndpoint as the sidecar reads it (the
// raw value, validated).
func storageEndpointOf(etcdBackup map[string][]byte) (string, error) {
	raw := etcdBackup[KeyStorageAPIEndpoint]
	if _, err := storageEndpoint(raw); err != nil {
		return "", err
	}
	return string(raw), nil
}
