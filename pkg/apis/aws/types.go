// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package aws is the providerConfig API of the AWS/S3 backup extension.
package aws

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/immutability"
)

const (
	// APIVersion is this API's version.
	APIVersion = "aws.backup.extensions.gardener.cloud/v1alpha1"
	// ProviderAWSAPIVersion is gardener-extension-provider-aws's version of the same kinds; it is
	// accepted so that a seed's existing spec.backup.providerConfig works unchanged.
	ProviderAWSAPIVersion = "aws.provider.extensions.gardener.cloud/v1alpha1"
	// KindBackupBucketConfig is the kind of a BackupBucket's providerConfig.
	KindBackupBucketConfig = "BackupBucketConfig"
	// KindWorkloadIdentityConfig is the kind of a workload identity secret's "config" key.
	KindWorkloadIdentityConfig = "WorkloadIdentityConfig"
)

// BackupBucketConfig is a BackupBucket's providerConfig.
type BackupBucketConfig struct {
	metav1.TypeMeta `json:",inline"`
	// Field is `backupFreshness:`: how old the newest backups of each etcd may be.
	freshness.Field `json:",inline"`
	// CopyField is `copy:`: the second store every entry's snapshots are copied to.
	copystore.CopyField `json:",inline"`

	// Immutability turns on S3 Object Lock with a default retention for every new object.
	Immutability *ImmutableConfig `json:"immutability,omitempty"`
	// Encryption selects the bucket's default encryption (default: SSE-S3).
	Encryption *EncryptionConfig `json:"encryption,omitempty"`
	// DisabledSettings switches off hardening settings that an S3-compatible store does not
	// implement. Nothing is skipped silently: a setting the store refuses is an error until it
	// is listed here.
	DisabledSettings []Setting `json:"disabledSettings,omitempty"`
	// GeneratedCredentials, when set, publishes bucket-scoped credentials as the bucket's
	// generated secret, so that shoots get those instead of the operator's.
	GeneratedCredentials *GeneratedCredentialsConfig `json:"generatedCredentials,omitempty"`
	// EntryCredentials, when set, gives every BackupEntry of the bucket a credential of its own
	// that reaches only the entry's prefix (docs/entry-credentials.md), issued by "IAM" (an IAM
	// user per entry with an inline policy limited to the prefix) or "MinIO" (a service account
	// per credential with such a policy, through the admin API). It belongs in the seed
	// configuration (the Seed's spec.extensions entry of type backup-aws).
	EntryCredentials *credentials.EntrySettings `json:"entryCredentials,omitempty"`
	// HandBack leaves the bucket in the state gardener-extension-provider-aws expects before it
	// takes the bucket back: its lifecycle rules in its form (GC-forTaggedObjects,
	// GC-delete-markers-objects, the abort rule), every version deferred by this extension also
	// marked with its tag gc-marked-for-deletion=true, read back before the reconcile succeeds.
	// Entries deferred meanwhile are marked for the incumbent's rule. See docs/aws.md.
	HandBack bool `json:"handBack,omitempty"`
}

var _ freshness.Policy = (*BackupBucketConfig)(nil)

// Issuers of generated credentials.
const (
	// IssuerIAM issues access keys of one IAM user per bucket (AWS).
	IssuerIAM = "IAM"
	// IssuerMinIO issues a MinIO user per bucket through MinIO's admin API.
	IssuerMinIO = "MinIO"
)

// GeneratedCredentialsConfig configures bucket-scoped credentials.
type GeneratedCredentialsConfig struct {
	// Rotation and AllowPassThrough (an S3-compatible store without IAM or MinIO's admin API).
	credentials.Generation `json:",inline"`

	// Issuer is what issues them: "IAM" (an IAM user per bucket with an inline policy limited
	// to the bucket; two access keys at most, the published and the previous one) or "MinIO" (a
	// user with a policy limited to the bucket, through the endpoint's admin API).
	Issuer string `json:"issuer"`
}

var _ credentials.EntryPolicy = (*BackupBucketConfig)(nil)

// EntryCredentialSettings implements credentials.EntryPolicy.
func (c *BackupBucketConfig) EntryCredentialSettings() *credentials.EntrySettings {
	if c == nil || c.EntryCredentials == nil {
		return nil
	}
	return c.EntryCredentials
}

// HandsBack implements config.ProviderConfig.
func (c *BackupBucketConfig) HandsBack() bool { return c != nil && c.HandBack }

// GenerationSettings implements credentials.Policy: the issuer is the one the config names.
func (c *BackupBucketConfig) GenerationSettings() *credentials.Settings {
	if c == nil || c.GeneratedCredentials == nil {
		return nil
	}
	return &credentials.Settings{Issuer: c.GeneratedCredentials.Issuer, Generation: c.GeneratedCredentials.Generation}
}

// RetentionTypeBucket is the only retention type: a default retention on the whole bucket.
const RetentionTypeBucket = immutability.RetentionTypeBucket

// Object Lock modes.
const (
	ModeGovernance = "governance"
	ModeCompliance = "compliance"
)

// ImmutableConfig is the bucket's Object Lock default retention.
type ImmutableConfig struct {
	// RetentionType must be "bucket".
	RetentionType string `json:"retentionType"`
	// RetentionPeriod is how long every object is locked, in whole days (24h multiples), >= 1 day.
	RetentionPeriod metav1.Duration `json:"retentionPeriod"`
	// Mode is governance (privileged users may shorten it) or compliance (nobody can, ever; it
	// can then never be weakened or shortened).
	Mode string `json:"mode"`
}

// Encryption types.
const (
	EncryptionSSES3  = "SSE-S3"
	EncryptionSSEKMS = "SSE-KMS"
)

// EncryptionConfig is the bucket's default encryption.
type EncryptionConfig struct {
	// Type is SSE-S3 or SSE-KMS.
	Type string `json:"type"`
	// KMSKeyID is the KMS key (ID, ARN or alias) for SSE-KMS; required for it, refused otherwise.
	KMSKeyID string `json:"kmsKeyID,omitempty"`
}

// Setting names a bucket setting that can be switched off for S3-compatible stores.
type Setting string

// Settings the extension converges on every reconcile.
const (
	SettingDefaultEncryption       Setting = "DefaultEncryption"
	SettingPublicAccessBlock       Setting = "PublicAccessBlock"
	SettingTLSOnlyPolicy           Setting = "TLSOnlyPolicy"
	SettingMultipartAbortLifecycle Setting = "MultipartAbortLifecycle"
)

// AllSettings lists every Setting.
var AllSettings = []Setting{SettingDefaultEncryption, SettingPublicAccessBlock, SettingTLSOnlyPolicy, SettingMultipartAbortLifecycle}

// WorkloadIdentityConfig is the "config" key of a workload identity secret.
type WorkloadIdentityConfig struct {
	metav1.TypeMeta `json:",inline"`

	// RoleARN is the IAM role assumed with the workload identity token.
	RoleARN string `json:"roleARN"`
}

// Disabled reports whether s is switched off.
func (c *BackupBucketConfig) Disabled(s Setting) bool {
	for _, d := range c.DisabledSettings {
		if d == s {
			return true
		}
	}
	return false
}
