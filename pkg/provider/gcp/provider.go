// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package gcp is the Google Cloud Storage provider: GCS (or an emulator at a configured endpoint)
// through cloud.google.com/go/storage, behind the core's objectstore.DataPlane and Management.
// Provider (a provider.Cloud) builds the stores (NewDataPlane, NewManagement) and the credential
// issuers (NewIssuer, NewEntryIssuer). Its concerns: secret keys, parsing credentials secrets and
// the etcd-backup secret (parseServiceAccount, EtcdBackupSecretData); SDK clients from credentials
// (NewClient); the bucket (management's EnsureBucket and DeleteBucket, desiredLifecycle); object
// operations (store); deferred deletion (DeferDeletion, markedRule); error classification
// (classify); per-bucket service-account keys (iamIssuer); per-entry service-account keys bound on
// managed folders (entryIssuer, ensureManagedFolder), their quota (entryIssuer's Headroom) and
// their sweep (SweepEntryCredentials). The SDK-free half (providerConfig decoding, bucket names)
// is pkg/apis/gcp.
package gcp

import (
	"context"
	"time"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Type is the extension type this provider serves.
const Type = gcpapi.Type

// Provider builds GCS stores and issuers. Its fields are fixed at start-up; nothing per request
// is kept.
type Provider struct {
	// RequestTimeout bounds each wait on the store within one HTTP request (default 60s): the
	// response headers, each read of a body, each stretch of an upload (httpclient.Stall); a
	// body that keeps flowing is never cut off.
	RequestTimeout time.Duration
	// IAMEndpoint overrides the IAM API endpoint used for generated credentials (tests point it
	// at a stand-in; empty: iam.googleapis.com).
	IAMEndpoint string
	// QuotasEndpoint overrides the Cloud Quotas API endpoint the entry issuer's Headroom reads
	// (tests point it at a stand-in; empty: cloudquotas.googleapis.com).
	QuotasEndpoint string
	// ListPageSize is the page size of object listings (0: the store's maximum, 1000; tests set
	// a few so that listings cross page boundaries among the generations of one object).
	ListPageSize int
}

var (
	_ provider.Cloud[*gcpapi.BackupBucketConfig]        = (*Provider)(nil)
	_ provider.EntryIssuing[*gcpapi.BackupBucketConfig] = (*Provider)(nil)
)

// Type implements provider.Cloud: gcpapi.Type.
func (*Provider) Type() string { return gcpapi.Type }

// ValidateBucketName implements provider.Cloud with gcpapi's rules (no SDK).
func (*Provider) ValidateBucketName(name string) error { return gcpapi.ValidateBucketName(name) }

// Decode implements provider.Cloud with gcpapi's decoding (no SDK).
func (*Provider) Decode(raw []byte) (*gcpapi.BackupBucketConfig, error) {
	return gcpapi.DecodeBackupBucketConfig(raw)
}

// NewDataPlane implements provider.Cloud.
func (p *Provider) NewDataPlane(ctx context.Context, creds provider.Credentials) (objectstore.DataPlane, error) {
	return p.newStore(ctx, creds)
}

// NewWriter builds the Writer of creds, for the conformance suite, the demo and the benchmarks
// (the controllers never write objects).
func (p *Provider) NewWriter(ctx context.Context, creds provider.Credentials) (objectstore.Writer, error) {
	return p.newStore(ctx, creds)
}

// NewManagement implements provider.Cloud: the data plane's clients with the bucket's config,
// which EnsureBucket converges to.
func (p *Provider) NewManagement(ctx context.Context, creds provider.Credentials, cfg *gcpapi.BackupBucketConfig) (objectstore.Management, error) {
	s, err := p.newStore(ctx, creds)
	if err != nil {
		return nil, err
	}
	return &management{store: s, cfg: cfg}, nil
}

func (p *Provider) newStore(ctx context.Context, creds provider.Credentials) (*store, error) {
	httpClient, projectID, err := p.authorizedClient(creds, storageScope)
	if err != nil {
		return nil, err
	}
	client, err := newStorageClient(ctx, httpClient, creds.Data)
	if err != nil {
		return nil, err
	}
	raw, err := newRawService(ctx, httpClient, creds.Data)
	if err != nil {
		return nil, err
	}
	return &store{client: client, raw: raw, projectID: projectID, pageSize: p.ListPageSize}, nil
}

// NewIssuer implements provider.Cloud. GCP has one issuer, the per-bucket service account's
// keys; any other name, the empty one included, is refused. Any credentials can issue: the IAM API decides whether they may.
func (p *Provider) NewIssuer(ctx context.Context, creds provider.Credentials, _ *gcpapi.BackupBucketConfig, issuer string) (objectstore.CredentialIssuer, error) {
	switch issuer {
	case gcpapi.IssuerServiceAccountKey:
		return p.newIAMIssuer(ctx, creds)
	default:
		return nil, objectstore.Invalidf("unknown credential issuer %q: GCP has only %q", issuer, gcpapi.IssuerServiceAccountKey)
	}
}

// NewEntryIssuer implements provider.EntryIssuing: a key of one service account per entry and
// access, bound on the entry's managed folder (entryIssuer). The empty name (an etcd-backup
// secret recorded without one) is GCP's one issuer.
func (p *Provider) NewEntryIssuer(ctx context.Context, creds provider.Credentials, _ *gcpapi.BackupBucketConfig, issuer string) (objectstore.EntryCredentialIssuer, error) {
	if issuer != "" && issuer != gcpapi.IssuerServiceAccountKey {
		return nil, objectstore.Invalidf("unknown issuer %q of entry credentials: GCP has only %q", issuer, gcpapi.IssuerServiceAccountKey)
	}
	i, err := p.newIAMIssuer(ctx, creds)
	if err != nil {
		return nil, err
	}
	return &entryIssuer{iamIssuer: i, provider: p, region: creds.Region}, nil
}
