// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package gcp is the providerConfig API of the Google Cloud Storage backup extension.
package gcp

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/immutability"
)

const (
	// APIVersion is this API's version.
	APIVersion = "gcp.backup.extensions.gardener.cloud/v1alpha1"
	// ProviderGCPAPIVersion is gardener-extension-provider-gcp's version of the same kinds; it is
	// accepted so that a seed's existing spec.backup.providerConfig and workload identity
	// configs work unchanged.
	ProviderGCPAPIVersion = "gcp.provider.extensions.gardener.cloud/v1alpha1"
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

	// Immutability sets a bucket retention policy: no object can be deleted or overwritten
	// before it is RetentionPeriod old.
	Immutability *ImmutableConfig `json:"immutability,omitempty"`
	// SoftDelete keeps deleted objects restorable for a while (GCS soft delete). Default: off,
	// so that a deleted shoot's backups do not linger, billed, for a week.
	SoftDelete *SoftDeleteConfig `json:"softDelete,omitempty"`
	// Labels are set on the bucket (for example for cost allocation) and kept there.
	Labels map[string]string `json:"labels,omitempty"`
	// GeneratedCredentials, when set, publishes the key of a service account per bucket, bound
	// only on that bucket, as the bucket's generated secret, so that shoots get it instead of
	// the operator's credentials.
	GeneratedCredentials *GeneratedCredentialsConfig `json:"generatedCredentials,omitempty"`
	// EntryCredentials, when set, gives every BackupEntry of the bucket a service account of its
	// own, bound only on the managed folder of the entry's prefix (docs/entry-credentials.md),
	// issuer "ServiceAccountKey" (a key of that account). It belongs in the seed configuration (the Seed's spec.extensions entry of type backup-gcp).
	EntryCredentials *credentials.EntrySettings `json:"entryCredentials,omitempty"`
	// HandBack, when true, leaves the bucket in the state gardener-extension-provider-gcp
	// expects before its controllers take the bucket back: the lifecycle is exactly its one rule
	// (delete a day after the custom time), read back before the reconcile succeeds, with every
	// generation a deferral of this extension left marked by a custom time. See docs/gcp.md,
	// "Taking over from and handing back to provider-gcp".
	HandBack bool `json:"handBack,omitempty"`
	// Store is gardener-extension-provider-gcp's store configuration (v1.53.4
	// pkg/apis/gcp/v1alpha1/types_backupbucket.go:21-23,43-48), accepted so that a seed's
	// providerConfig works unchanged: see StoreEndpointOverride.
	Store *StoreConfig `json:"store,omitempty"`
}

// StoreConfig is provider-gcp's store configuration.
type StoreConfig struct {
	// EndpointOverride is the endpoint at which the bucket is reached, for example a regional
	// endpoint (https://storage.me-central2.rep.googleapis.com): what etcd-backup-restore is
	// pointed at through Etcd.spec.backup.store.endpointOverride. provider-gcp's seedprovider
	// webhook copies it there (v1.53.4 pkg/webhook/seedprovider/ensurer.go:71-73); its own
	// controllers never use it, and neither do this extension's (their endpoint is the secret's
	// storageAPIEndpoint).
	EndpointOverride *string `json:"endpointOverride,omitempty"`
}

// StoreEndpointOverride is store.endpointOverride, "" when unset: the endpoint a seed webhook
// sets as Etcd.spec.backup.store.endpointOverride, as provider-gcp's does.
func (c *BackupBucketConfig) StoreEndpointOverride() string {
	if c == nil || c.Store == nil || c.Store.EndpointOverride == nil {
		return ""
	}
	return *c.Store.EndpointOverride
}

var _ freshness.Policy = (*BackupBucketConfig)(nil)

// GeneratedCredentialsConfig configures the service-account keys issued per bucket: rotation,
// and AllowPassThrough (for example when an organization policy forbids service-account keys).
type GeneratedCredentialsConfig struct {
	credentials.Generation `json:",inline"`
}

var _ credentials.EntryPolicy = (*BackupBucketConfig)(nil)

// EntryCredentialSettings implements credentials.EntryPolicy.
func (c *BackupBucketConfig) EntryCredentialSettings() *credentials.EntrySettings {
	if c == nil || c.EntryCredentials == nil {
		return nil
	}
	return c.EntryCredentials
}

// IssuerServiceAccountKey issues a key of one service account per bucket, bound to the bucket
// only (generated credentials), or per entry, bound on the entry's managed folder only (entry
// credentials): GCP's one issuer.
const IssuerServiceAccountKey = "ServiceAccountKey"

// HandsBack implements config.ProviderConfig.
func (c *BackupBucketConfig) HandsBack() bool { return c != nil && c.HandBack }

// GenerationSettings implements credentials.Policy.
func (c *BackupBucketConfig) GenerationSettings() *credentials.Settings {
	if c == nil || c.GeneratedCredentials == nil {
		return nil
	}
	return &credentials.Settings{Issuer: IssuerServiceAccountKey, Generation: c.GeneratedCredentials.Generation}
}

// RetentionTypeBucket is the only retention type: a retention policy on the whole bucket.
const RetentionTypeBucket = immutability.RetentionTypeBucket

// ImmutableConfig is the bucket's retention policy.
type ImmutableConfig struct {
	// RetentionType must be "bucket".
	RetentionType string `json:"retentionType"`
	// RetentionPeriod is how long every object is kept, at least 24h, in whole seconds.
	RetentionPeriod metav1.Duration `json:"retentionPeriod"`
	// Locked locks the policy: from then on nobody can remove it or shorten the period, ever
	// (it can still be extended). The extension never unlocks, removes or shortens a locked
	// policy; it reports a configuration that asks for that as an error.
	Locked bool `json:"locked,omitempty"`
}

// SoftDeleteConfig is the bucket's soft delete policy.
type SoftDeleteConfig struct {
	// RetentionDuration is how long deleted objects stay restorable: 0 (off) or 7 to 90 days.
	RetentionDuration metav1.Duration `json:"retentionDuration"`
}

// WorkloadIdentityConfig is the "config" key of a workload identity secret.
type WorkloadIdentityConfig struct {
	metav1.TypeMeta `json:",inline"`

	// ProjectID is the GCP project the bucket lives in.
	ProjectID string `json:"projectID"`
	// CredentialsConfig is the external account credentials configuration
	// (type "external_account") of the workload identity pool.
	CredentialsConfig json.RawMessage `json:"credentialsConfig"`
}
