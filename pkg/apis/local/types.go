// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package local is the providerConfig API of the local backup provider: a bucket is a directory
// on the filesystem, in the layout etcd-backup-restore's Local storage provider reads. It is for
// Gardener's local setup and tests, not for production (docs/local.md).
package local

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
)

const (
	// APIVersion is this API's version.
	APIVersion = "local.backup.extensions.gardener.cloud/v1alpha1"
	// KindBackupBucketConfig is the kind of a BackupBucket's providerConfig.
	KindBackupBucketConfig = "BackupBucketConfig"
)

// BackupBucketConfig is a BackupBucket's providerConfig. A directory has no settings to
// converge beyond its mode: the only field is the freshness every provider shares. Versioning,
// immutability and generated credentials do not exist on a filesystem and are refused, never
// ignored.
type BackupBucketConfig struct {
	metav1.TypeMeta `json:",inline"`
	// Field is `backupFreshness:`: how old the newest backups of each etcd may be.
	freshness.Field `json:",inline"`
	// CopyField is `copy:`: the second store every entry's snapshots are copied to.
	copystore.CopyField `json:",inline"`

	// Immutability is accepted by the decoder only to be refused with a clear message.
	Immutability map[string]any `json:"immutability,omitempty"`
	// GeneratedCredentials is accepted by the decoder only to be refused with a clear message.
	GeneratedCredentials map[string]any `json:"generatedCredentials,omitempty"`
}

// GenerationSettings implements credentials.Policy: a directory has no credentials to issue.
func (c *BackupBucketConfig) GenerationSettings() *credentials.Settings { return nil }

// HandsBack implements config.ProviderConfig: there is nothing to hand back to.
func (c *BackupBucketConfig) HandsBack() bool { return false }
