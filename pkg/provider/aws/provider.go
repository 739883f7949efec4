// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package aws is the AWS/S3 provider: AWS S3 and S3-compatible stores (MinIO, Ceph, ...) through
// aws-sdk-go-v2, behind the core's objectstore.DataPlane and Management. Provider (a
// provider.Cloud) builds the stores (NewDataPlane, NewWriter, NewManagement) and, dispatching by
// issuer name, the credential issuers (NewIssuer: iamIssuer and minioIssuer; NewEntryIssuer:
// iamEntryIssuer and minioEntryIssuer). Its concerns: the secret's keys, their checks and the
// etcd-backup secret (EtcdBackupSecretData); the SDK clients (clientConfig, NewS3Client: auth,
// endpoint, TLS, metrics); the bucket (management's EnsureBucket and DeleteBucket); the object
// operations and Probe (store), streamed writes and server-side copies (PutObjectStream,
// CopyObject); deferred deletion (DeferDeletion, deferralRules); adoption from
// and hand-back to provider-aws (AdoptedRule, incumbentLifecycle); error classification
// (classify). The SDK-free half (config, bucket names) is pkg/apis/aws.
package aws

import (
	"context"
	"fmt"
	"time"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Type is the extension type this provider serves.
const Type = awsapi.Type

// Provider builds S3 stores and their credential issuers. Its fields are fixed at start-up;
// nothing per request is kept.
type Provider struct {
	// STSEndpoint overrides the STS endpoint used for workload identity (tests point it at a
	// stand-in; empty: AWS's regional endpoint).
	STSEndpoint string
	// RequestTimeout bounds each wait on the store within one HTTP request (default 60s): the
	// response headers, each read of a body, each stretch of an upload (httpclient.Stall); a
	// body that keeps flowing is never cut off.
	RequestTimeout time.Duration
	// IAMEndpoint overrides the IAM endpoint used for generated credentials (tests point it at a
	// stand-in; empty: AWS's global endpoint).
	IAMEndpoint string
	// ListPageSize overrides the listing page size (0: S3's maximum of 1000); tests force small
	// pages so that listings cross page boundaries between one key's versions.
	ListPageSize int
}

var (
	_ provider.Cloud[*awsapi.BackupBucketConfig]        = (*Provider)(nil)
	_ provider.EntryIssuing[*awsapi.BackupBucketConfig] = (*Provider)(nil)
)

// Type implements provider.Cloud: awsapi.Type.
func (*Provider) Type() string { return awsapi.Type }

// ValidateBucketName implements provider.Cloud with awsapi's rules (no SDK).
func (*Provider) ValidateBucketName(name string) error { return awsapi.ValidateBucketName(name) }

// Decode implements provider.Cloud with awsapi's decoding (no SDK).
func (*Provider) Decode(raw []byte) (*awsapi.BackupBucketConfig, error) {
	return awsapi.DecodeBackupBucketConfig(raw)
}

// NewDataPlane implements provider.Cloud.
func (p *Provider) NewDataPlane(_ context.Context, creds provider.Credentials) (objectstore.DataPlane, error) {
	return p.newStore(creds)
}

// NewWriter builds the Writer of creds, for the conformance suite, the demo and the benchmarks
// (the controllers never write objects).
func (p *Provider) NewWriter(_ context.Context, creds provider.Credentials) (objectstore.Writer, error) {
	return p.newStore(creds)
}

// NewManagement implements provider.Cloud: the data plane's client with the bucket's config,
// which EnsureBucket converges to.
func (p *Provider) NewManagement(_ context.Context, creds provider.Credentials, cfg *awsapi.BackupBucketConfig) (objectstore.Management, error) {
	s, err := p.newStore(creds)
	if err != nil {
		return nil, err
	}
	return &management{store: s, cfg: cfg}, nil
}

func (p *Provider) newStore(creds provider.Credentials) (*store, error) {
	client, err := p.NewS3Client(creds)
	if err != nil {
		return nil, err
	}
	sse, err := parseCustomerKey(creds.Data)
	if err != nil {
		return nil, err
	}
	s := &store{client: client, regionOverride: string(creds.Data[KeyRegion]), pageSize: int32(p.ListPageSize),
		credentialKeys: fmt.Sprintf("%q and %q", KeyAccessKeyID, KeySecretAccessKey), sse: sse,
		s3Compatible: len(creds.Data[KeyEndpoint]) > 0}
	if creds.WorkloadIdentity {
		s.credentialKeys = fmt.Sprintf("%q and %q (workload identity)", KeyConfig, KeyToken)
	}
	return s, nil
}

// NewIssuer implements provider.Cloud: IAM users on AWS, MinIO users through MinIO's admin
// API. Both need nothing of the bucket's config. Any other name, the empty one included, is
// refused: the config names its issuer (validated), and so does every generated secret.
func (p *Provider) NewIssuer(_ context.Context, creds provider.Credentials, _ *awsapi.BackupBucketConfig, issuer string) (objectstore.CredentialIssuer, error) {
	if issuer != awsapi.IssuerIAM && issuer != awsapi.IssuerMinIO {
		return nil, objectstore.Invalidf("unknown issuer %q of generated credentials: want %q or %q", issuer, awsapi.IssuerIAM, awsapi.IssuerMinIO)
	}
	// The secret is checked as for a store, so that both refuse the same secrets alike.
	awsCfg, _, err := p.clientConfig(creds)
	if err != nil {
		return nil, err
	}
	if issuer == awsapi.IssuerIAM {
		return p.newIAMIssuer(creds.Data, awsCfg), nil
	}
	m, err := newMinIOIssuer(creds.Data)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return m, nil
}

// NewEntryIssuer implements provider.EntryIssuing: an IAM user per entry on AWS, a MinIO service
// account per credential through MinIO's admin API (iamEntryIssuer, minioEntryIssuer). Any other
// name is refused, the empty one included: AWS has two entry issuers, so it names neither (the
// entry's settings always name one, validated, and a record without one names nothing).
func (p *Provider) NewEntryIssuer(ctx context.Context, creds provider.Credentials, cfg *awsapi.BackupBucketConfig, issuer string) (objectstore.EntryCredentialIssuer, error) {
	if issuer != awsapi.IssuerIAM && issuer != awsapi.IssuerMinIO {
		return nil, objectstore.Invalidf("unknown issuer %q of entry credentials: want %q or %q", issuer, awsapi.IssuerIAM, awsapi.IssuerMinIO)
	}
	bucketIssuer, err := p.NewIssuer(ctx, creds, cfg, issuer)
	if err != nil {
		return nil, err
	}
	switch i := bucketIssuer.(type) {
	case *iamIssuer:
		return &iamEntryIssuer{iamIssuer: i, provider: p, region: creds.Region}, nil
	case *minioIssuer:
		return &minioEntryIssuer{minioIssuer: i, provider: p, region: creds.Region}, nil
	}
	return nil, fmt.Errorf("issuer %q: unexpected %T", issuer, bucketIssuer)
}
