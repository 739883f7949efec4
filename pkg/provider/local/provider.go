// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package local is the local provider: a bucket is a directory under a root directory on the
// extension's filesystem, an entry is its sub-directory "<entry>/", in the layout
// etcd-backup-restore's Local storage provider writes (etcd-druid mounts
// "<hostPath>/<bucket>" at "$HOME/<bucket>" of the sidecar, which stores under
// "$HOME/<bucket>/<entry>/..."). It serves Gardener's local setup (BackupBuckets of type local)
// and tests; it is not for production (docs/local.md).
//
// Provider (a provider.Cloud) builds the stores. Its concerns: the binary's flags (Flags); the
// secret's keys and the etcd-backup secret (checkSecret, EtcdBackupSecretData); reaching a
// bucket's directory without ever following a symbolic link out of it (store's openBucket);
// management's EnsureBucket and DeleteBucket (ownership by a marker file); the object operations
// (store); DeferDeletion (unsupported: nothing is ever locked); error classification (classify).
// There is no issuer: a directory has no credentials. The SDK-free API (providerConfig, directory
// names) is pkg/apis/local.
package local

import (
	"context"
	"path/filepath"

	localapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Type is the extension type this provider serves.
const Type = localapi.Type

// Provider builds the planes of bucket directories under Root. Its fields are fixed at
// start-up (Flags); nothing per request is kept.
type Provider struct {
	// Root is the absolute directory, as this process sees it, in which every bucket is a
	// directory (--local-root).
	Root string
	// HostPath is the same directory as the nodes see it, which the etcd-backup secret carries
	// as hostPath for etcd-druid to mount (--local-host-path; default Root).
	HostPath string
	// ListPageSize is the listing page size (default 1000).
	ListPageSize int
}

var _ provider.Cloud[*localapi.BackupBucketConfig] = (*Provider)(nil)

// defaultPageSize is the default listing page size.
const defaultPageSize = 1000

// Type implements provider.Cloud: localapi.Type.
func (*Provider) Type() string { return localapi.Type }

// ValidateBucketName implements provider.Cloud with localapi's rules (no SDK).
func (*Provider) ValidateBucketName(name string) error { return localapi.ValidateBucketName(name) }

// Decode implements provider.Cloud with localapi's decoding (no SDK).
func (*Provider) Decode(raw []byte) (*localapi.BackupBucketConfig, error) {
	return localapi.DecodeBackupBucketConfig(raw)
}

// NewDataPlane implements provider.Cloud.
func (p *Provider) NewDataPlane(_ context.Context, creds provider.Credentials) (objectstore.DataPlane, error) {
	return p.newStore(creds)
}

// NewWriter builds the Writer of creds, for the conformance suite, the demo and the tests (the
// controllers never write objects).
func (p *Provider) NewWriter(_ context.Context, creds provider.Credentials) (objectstore.Writer, error) {
	return p.newStore(creds)
}

// NewManagement implements provider.Cloud. A directory has no settings beyond its mode, so cfg
// (the defaults or backupFreshness, which the core reads) changes nothing here.
func (p *Provider) NewManagement(_ context.Context, creds provider.Credentials, _ *localapi.BackupBucketConfig) (objectstore.Management, error) {
	s, err := p.newStore(creds)
	if err != nil {
		return nil, err
	}
	return &management{store: s}, nil
}

// NewIssuer implements provider.Cloud: a directory has no credentials, so there is no issuer of
// any name (its providerConfig never asks for generated credentials, so nothing asks for one).
func (p *Provider) NewIssuer(_ context.Context, _ provider.Credentials, _ *localapi.BackupBucketConfig, issuer string) (objectstore.CredentialIssuer, error) {
	return nil, objectstore.Invalidf("the local provider has no credential issuer %q (it issues no generated credentials)", issuer)
}

// newStore checks the provider's root and the secret and builds the data plane.
func (p *Provider) newStore(creds provider.Credentials) (*store, error) {
	if p.Root == "" || !filepath.IsAbs(p.Root) {
		return nil, objectstore.Invalidf("--%s: the local provider needs the absolute directory that holds its buckets", FlagRoot)
	}
	if err := p.checkSecret(creds.Data); err != nil {
		return nil, err
	}
	size := p.ListPageSize
	if size <= 0 {
		size = defaultPageSize
	}
	return &store{root: filepath.Clean(p.Root), pageSize: size}, nil
}

// hostPath is the directory the etcd-backup secret names.
func (p *Provider) hostPath() string {
	if p.HostPath != "" {
		return p.HostPath
	}
	return p.Root
}
