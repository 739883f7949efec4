// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local

import (
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// The secret data keys. A directory needs no credentials: Gardener's local setup gives buckets an
// empty secret. The etcd-backup secret carries exactly what etcd-druid reads for the Local
// storage provider.
const (
	// KeyHostPath is the directory, as the nodes see it, that holds the bucket directories:
	// etcd-druid mounts "<hostPath>/<bucketName>" into etcd-backup-restore (gardener's
	// provider-local writes the same key).
	KeyHostPath = "hostPath"
	// KeyBucketName is the bucket (directory) name, which gardener's generic actuator puts into
	// the entry's secret.
	KeyBucketName = "bucketName"
)

// checkSecret accepts any secret (it holds no credentials) except one whose hostPath names
// another directory than the one this extension serves: backups would go where the extension
// neither lists nor deletes. The message names the key and the flag, never the value.
func (p *Provider) checkSecret(data map[string][]byte) error {
	if v, ok := data[KeyHostPath]; ok && string(v) != p.hostPath() {
		return objectstore.Invalidf("%s: the secret names another directory than the one this extension serves its buckets from (--%s): "+
			"remove the key or make it equal", KeyHostPath, FlagHostPath)
	}
	return nil
}

// EtcdBackupSecretData implements provider.Cloud: the bucket's name and the host path, the two
// keys etcd-druid reads for the Local storage provider (etcd-backup-restore itself reads no
// secret: its store is "$HOME/<bucketName>").
func (p *Provider) EtcdBackupSecretData(_ *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	if err := p.checkSecret(data); err != nil {
		return nil, err
	}
	bucket, ok := data[KeyBucketName]
	if !ok || len(bucket) == 0 {
		return nil, objectstore.Invalidf("%s: missing in the entry's secret", KeyBucketName)
	}
	return map[string][]byte{KeyBucketName: bucket, KeyHostPath: []byte(p.hostPath())}, nil
}
