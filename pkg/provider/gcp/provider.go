// Package gcp is the Google Cloud Storage provider: GCS (or an emulator at a configured endpoint)
// through cloud.google.com/go/storage, behind the core's objectstore.Store. Its rooms: provider.go
// (Provider, NewStore, NewIssuer), secret.go (secret keys, parsing credentials secrets, the
// etcd-backup secret), client.go (SDK clients from credentials), bucket.go (EnsureBucket,
// DeleteBucket), store.go (object operations), deferral.go (DeferDeletion), errors.go (error
// classification), issuer.go (per-bucket service-account keys). The SDK-free half (providerConfig
// decoding, bucket names) is pkg/apis/gcp.
package gcp

import (
	"context"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Type is the extension type this provider serves.
const Type = gcpapi.Type

// Provider builds GCS stores and issuers. Its fields are fixed at start-up; nothing per request
// is kept. Its SDK-free methods (Type, DecodeBucketConfig, ValidateBucketName) are gcpapi.API's.
type Provider struct {
	gcpapi.API
	// RequestTimeout bounds one HTTP request (default 60s).
	RequestTimeout time.Duration
	// IAMEndpoint overrides the IAM API endpoint used for generated credentials (tests point it
	// at a stand-in; empty: iam.googleapis.com).
	IAMEndpoint string
	// ListPageSize is the page size of object listings (0: the store's maximum, 1000; tests set
	// a few so that listings cross page boundaries among the generations of one object).
	ListPageSize int
}

var _ provider.Provider = (*Provider)(nil)

// NewStore implements provider.Provider. cfg is what EnsureBucket converges the bucket to (nil:
// the defaults).
func (p *Provider) NewStore(ctx context.Context, creds provider.Credentials, cfg config.Bucket) (objectstore.Store, error) {
	c, _ := cfg.(*gcpapi.BackupBucketConfig)
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
	return &store{client: client, raw: raw, projectID: projectID, pageSize: p.ListPageSize, cfg: c}, nil
}

// NewIssuer implements provider.Provider. GCP has one issuer, the per-bucket service account's
// keys; the empty name (secrets generated before issuers were named) is that one too. Any
// credentials can issue: the IAM API decides whether they may.
func (p *Provider) NewIssuer(ctx context.Context, creds provider.Credentials, _ config.Bucket, issuer string) (objectstore.CredentialIssuer, error) {
	switch issuer {
	case gcpapi.IssuerServiceAccountKey, "":
		return p.newIAMIssuer(ctx, creds)
	default:
		return nil, objectstore.Invalidf("unknown credential issuer %q: GCP has only %q", issuer, gcpapi.IssuerServiceAccountKey)
	}
}
