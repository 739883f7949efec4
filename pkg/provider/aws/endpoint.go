// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
)

// EtcdStoreEndpoint implements provider.Cloud: the etcd-backup secret's endpoint (an
// S3-compatible store's), which etcd-backup-restore hands to the SDK as its base endpoint on both
// paths (v0.43.0 pkg/snapstore/s3_snapstore.go:93-95 for the flag, :214-217 for the key); none
// for AWS's own endpoints.
func (*Provider) EtcdStoreEndpoint(_ *awsapi.BackupBucketConfig, etcdBackup map[string][]byte) (string, error) {
	if err := validateEndpoint(etcdBackup); err != nil {
		return "", err
	}
	return string(etcdBackup[KeyEndpoint]), nil
}
