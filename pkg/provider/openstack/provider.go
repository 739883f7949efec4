// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package openstack is the OpenStack Swift provider: Keystone v3 and object storage v1 through
// gophercloud, behind the core's objectstore.DataPlane and Management.
//
// Provider (a provider.Cloud) builds the stores (NewDataPlane, NewManagement) and the issuer
// (NewIssuer). Its concerns: the secret's keys, their parsing and the etcd-backup secret
// (credentials, EtcdBackupSecretData); the HTTP client and the Keystone session (httpClient,
// store's swift); the container (management's EnsureBucket and DeleteBucket, ownershipOf); the
// object operations (store); DeferDeletion; error classification (classify); the Keystone
// application credential issuer (keystoneIssuer). The SDK-free API (providerConfig, container
// names) is pkg/apis/openstack.
package openstack

import (
	"context"
	"time"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Type is the extension type this provider serves.
const Type = osapi.Type

// Provider builds Swift stores and Keystone issuers. Its fields are fixed at start-up; nothing
// per request is kept.
type Provider struct {
	// RequestTimeout bounds each wait on the store within one HTTP request (default 60s): the
	// response headers, each read of a body, each stretch of an upload (httpclient.Stall); a
	// body that keeps flowing is never cut off.
	RequestTimeout time.Duration
	// ListPageSize is the listing page size (default 10000, Swift's usual maximum).
	ListPageSize int
	// EndpointRewrite, if set, rewrites the object-store URL from Keystone's catalog (benchmarks
	// route requests through a delaying proxy with it).
	EndpointRewrite func(string) string
}

var _ provider.Cloud[*osapi.BackupBucketConfig] = (*Provider)(nil)

// Type implements provider.Cloud: osapi.Type.
func (*Provider) Type() string { return osapi.Type }

// ValidateBucketName implements provider.Cloud with osapi's rules (no SDK).
func (*Provider) ValidateBucketName(name string) error { return osapi.ValidateBucketName(name) }

// Decode implements provider.Cloud with osapi's decoding (no SDK).
func (*Provider) Decode(raw []byte) (*osapi.BackupBucketConfig, error) {
	return osapi.DecodeBackupBucketConfig(raw)
}

// NewDataPlane implements provider.Cloud. It validates the secret now; Keystone is asked on the
// first call, so that an authentication failure is a classified store error.
func (p *Provider) NewDataPlane(_ context.Context, creds provider.Credentials) (objectstore.DataPlane, error) {
	return p.newStore(creds)
}

// NewWriter builds the Writer of creds, for the conformance suite, the demo and the benchmarks
// (the controllers never write objects).
func (p *Provider) NewWriter(_ context.Context, creds provider.Credentials) (objectstore.Writer, error) {
	return p.newStore(creds)
}

// NewManagement implements provider.Cloud. The management plane refuses to make a bucket whose
// shoots' etcd-backup-restore could not use the secret (bucketCheck).
func (p *Provider) NewManagement(_ context.Context, creds provider.Credentials, cfg *osapi.BackupBucketConfig) (objectstore.Management, error) {
	s, err := p.newStore(creds)
	if err != nil {
		return nil, err
	}
	return &management{store: s, cfg: cfg, unusable: bucketCheck(creds.Data, cfg)}, nil
}

// NewIssuer implements provider.Cloud: Keystone application credentials are OpenStack's one
// issuer, and every credentials secret can issue them; any other name, the empty one included,
// is refused.
func (p *Provider) NewIssuer(_ context.Context, creds provider.Credentials, cfg *osapi.BackupBucketConfig, issuer string) (objectstore.CredentialIssuer, error) {
	switch issuer {
	case osapi.IssuerApplicationCredential:
	default:
		return nil, objectstore.Invalidf("OpenStack has no credential issuer %q (it has %q)", issuer, osapi.IssuerApplicationCredential)
	}
	s, err := p.newStore(creds)
	if err != nil {
		return nil, err
	}
	c := cfg
	if c == nil || c.GeneratedCredentials == nil {
		// Only revocation is left to do, and it needs nothing of the config.
		c = &osapi.BackupBucketConfig{GeneratedCredentials: &osapi.GeneratedCredentialsConfig{}}
	}
	return &keystoneIssuer{store: s, cfg: c}, nil
}

// newStore builds the data plane from a validated secret.
func (p *Provider) newStore(creds provider.Credentials) (*store, error) {
	c, err := parseCredentials(creds.Data, creds.Region)
	if err != nil {
		return nil, err
	}
	hc, err := p.httpClient(c)
	if err != nil {
		return nil, err
	}
	pageSize := p.ListPageSize
	if pageSize <= 0 {
		pageSize = listPageSize
	}
	return &store{creds: c, httpClient: hc, pageSize: pageSize, rewrite: p.EndpointRewrite}, nil
}
