// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package azure is the Azure Blob Storage provider: storage accounts' blob containers through
// azblob, behind the core's objectstore.DataPlane and Management.
//
// Provider (a provider.Cloud) builds the stores (NewDataPlane, NewManagement) and the issuer
// (NewIssuer). Its concerns: the secrets' keys, their parsing and etcd-backup's data (account,
// EtcdBackupSecretData); the SDK clients (managementCredential, NewClient: auth, clouds,
// transports); the storage account the extension manages (ownAccount, ensureAccount,
// accountAccess: ownership, hardening, its keys' reach); the bucket (EnsureBucket and
// DeleteBucket, with ensureImmutability and ensureSoftDelete, and deferredDeletionRule); the
// object operations (store); DeferDeletion; error classification (classify); the account key
// issuer (accountKeyIssuer).
package azure

import (
	"context"
	"fmt"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Type is the extension type this provider serves.
const Type = azureapi.Type

// Provider builds Azure Blob stores. Its fields are fixed at start-up; nothing per request is kept.
type Provider struct {
	// RequestTimeout bounds each wait on the store within one HTTP request (default 60s): the
	// response headers, each read of a body, each stretch of an upload (httpclient.Stall); a
	// body that keeps flowing is never cut off.
	RequestTimeout time.Duration
	// Cloud, when set, replaces the cloud chosen by the region for the management plane, and a
	// providerConfig that names a cloud is refused (--azure-cloud-config; tests point it at a
	// stand-in of Microsoft Entra ID and Azure Resource Manager).
	Cloud *cloud.Configuration
	// ManagementTransport, when set, carries the management plane's and the token endpoint's
	// requests (tests: a client that trusts the stand-in's certificate).
	ManagementTransport policy.Transporter
	// ListPageSize is the most entries one listing page asks for (0: Azure's maximum, 5000;
	// tests force small pages so that page boundaries fall between one blob's versions).
	ListPageSize int
}

var _ provider.Cloud[*azureapi.BackupBucketConfig] = (*Provider)(nil)

// Type implements provider.Cloud: azureapi.Type.
func (*Provider) Type() string { return azureapi.Type }

// ValidateBucketName implements provider.Cloud with azureapi's rules (no SDK).
func (*Provider) ValidateBucketName(name string) error { return azureapi.ValidateBucketName(name) }

// Decode implements provider.Cloud with azureapi's decoding (no SDK).
func (*Provider) Decode(raw []byte) (*azureapi.BackupBucketConfig, error) {
	return azureapi.DecodeBackupBucketConfig(raw)
}

// NewDataPlane implements provider.Cloud: the blobs of the secret's account (an account key
// secret), or of each bucket's own account, reached with its key through the management plane
// (a service principal or a workload identity). Without a providerConfig the cloud is the
// region's (or Provider.Cloud).
func (p *Provider) NewDataPlane(_ context.Context, creds provider.Credentials) (objectstore.DataPlane, error) {
	return p.newDataPlane(creds)
}

// NewWriter builds the Writer of creds, for the conformance suite, the demo and the benchmarks
// (the controllers never write objects).
func (p *Provider) NewWriter(_ context.Context, creds provider.Credentials) (objectstore.Writer, error) {
	return p.newDataPlane(creds)
}

func (p *Provider) newDataPlane(creds provider.Credentials) (*store, error) {
	defaults := &azureapi.BackupBucketConfig{}
	arm, a, err := p.reach(creds, defaults)
	switch {
	case err != nil:
		return nil, err
	case arm != nil:
		return arm.blobs, nil
	}
	return p.keyStore(*a)
}

// NewManagement implements provider.Cloud. What the secret holds decides the management plane: a
// service principal or a workload identity reaches the Azure Resource Manager (resource group,
// account, container, generated account keys); an account name and key reach one account's
// containers.
func (p *Provider) NewManagement(_ context.Context, creds provider.Credentials, cfg *azureapi.BackupBucketConfig) (objectstore.Management, error) {
	arm, a, err := p.reach(creds, cfg)
	switch {
	case err != nil:
		return nil, err
	case arm != nil:
		return arm, nil
	}
	if err := cloudDomainMatches(cfg, *a); err != nil {
		return nil, err
	}
	s, err := p.keyStore(*a)
	if err != nil {
		return nil, err
	}
	return &keyManagement{store: s, config: cfg}, nil
}

// keyStore is the data plane of an account key secret: its one account.
func (p *Provider) keyStore(a account) (*store, error) {
	client, err := p.newClient(a)
	if err != nil {
		return nil, err
	}
	reached := blobAccount{client: client, name: a.name}
	return &store{
		reach:      func(context.Context, string) (blobAccount, error) { return reached, nil },
		pageSize:   p.pageSize(),
		secretKeys: fmt.Sprintf("%q and %q", KeyStorageAccount, KeyStorageKey),
	}, nil
}

// NewIssuer implements provider.Cloud. Azure's one issuer publishes the keys of the storage
// account the extension manages, reached with management-plane credentials; an account key
// secret issues none (shoots use its key as it is). Any other name, the empty one included, is
// refused.
func (p *Provider) NewIssuer(_ context.Context, creds provider.Credentials, cfg *azureapi.BackupBucketConfig, issuer string) (objectstore.CredentialIssuer, error) {
	switch issuer {
	case azureapi.IssuerAccountKey:
	default:
		return nil, objectstore.Invalidf("credential issuer %q is unknown: Azure's only issuer is %q", issuer, azureapi.IssuerAccountKey)
	}
	arm, _, err := p.reach(creds, cfg)
	if err != nil || arm == nil {
		return nil, err // an account key secret issues none; a malformed one is refused as its store is
	}
	return &accountKeyIssuer{s: arm}, nil
}

// reach returns the management-plane store of a service principal or workload identity secret,
// or, for an account key secret, its parsed account.
func (p *Provider) reach(creds provider.Credentials, c *azureapi.BackupBucketConfig) (*armStore, *account, error) {
	opts := p.managementOptions(p.cloudFor(creds, c))
	sub, cred, err := p.managementCredential(creds, opts)
	if err != nil {
		return nil, nil, err
	}
	if cred == nil {
		a, err := parseAccount(creds.Data)
		if err != nil {
			return nil, nil, err
		}
		return nil, &a, nil
	}
	if p.Cloud != nil && c != nil && c.CloudConfiguration != nil {
		// Declared, it would silently not be applied: the binary's cloud replaces it.
		return nil, nil, objectstore.Invalidf("spec.providerConfig.cloudConfiguration.name is %q, but this extension reaches the management plane of the cloud given by --%s (or a test's stand-in): remove cloudConfiguration from the providerConfig",
			c.CloudConfiguration.Name, FlagCloudConfig)
	}
	arm, err := p.newARMStore(creds, c, sub, cred, opts)
	return arm, nil, err
}

// newARMStore builds the management-plane store of a service principal or workload identity.
func (p *Provider) newARMStore(creds provider.Credentials, c *azureapi.BackupBucketConfig, sub string, cred azcore.TokenCredential, opts azcore.ClientOptions) (*armStore, error) {
	if creds.Region == "" {
		return nil, objectstore.Invalidf("spec.region is empty: a storage account needs a location")
	}
	return newARMStore(sub, cred, &arm.ClientOptions{ClientOptions: opts}, creds.Region, c, p.newClient, p.pageSize())
}

// pageSize is the listing page size: ListPageSize, or Azure's maximum.
func (p *Provider) pageSize() int32 {
	if p.ListPageSize <= 0 || p.ListPageSize > maxListPageSize {
		return maxListPageSize
	}
	return int32(p.ListPageSize)
}
