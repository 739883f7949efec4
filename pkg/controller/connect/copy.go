// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package connect

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// CopyPassDeadline bounds the start of one pass's snapshots in the entry copy (its listings and
// copies inside the store too): a snapshot streamed at that moment goes on while its bytes flow,
// and commits only after a look at the entry from the API server found it live and not being
// deleted, within CopyPassDeadline of that look (replication.Options.Guard). So every write of a
// pass lands within CopyPassDeadline of the pass's start or of such a look: an entry's deletion
// waits that out (after the entry's deletionTimestamp) before it empties the entry's prefix in
// the copy, so that no pass writes there afterwards.
const CopyPassDeadline = 2 * time.Minute

// CopyPlace is where a bucket's copy lives: the copy bucket, its region and its credentials
// secret (ref-<credentialsRef> in the seed's garden namespace), its provider (copy.type's, which
// may differ from the primary's) and its providerConfig decoded by that provider.
type CopyPlace struct {
	Settings *copystore.Settings
	Bucket   string
	Region   string
	Secret   corev1.SecretReference
	Config   provider.Config
	// Provider is the copy store's provider (provider.CopyStore): every plane of the copy is
	// built with it.
	Provider provider.Provider
	// primaryType is the primary's provider type (IsBucket).
	primaryType string
}

// IsBucket reports whether the copy bucket is bucket of the primary's store: the same name in a
// store of the same type (the copy's endpoint and account are not compared: a copy named as the
// primary is refused). A bucket of that name in a store of another type is another bucket.
func (c *CopyPlace) IsBucket(bucket string) bool {
	return c.Bucket == bucket && c.Provider.Type() == c.primaryType
}

// CopyPlaceOf is the copy that cfg (a bucket's or an entry's config, merged with the seed
// configuration) declares for the primary bucket, or nil when it declares none. The copy's
// provider is copy.type's among p's copy stores (provider.CopyStore; p's own without a type), and
// the copy's own providerConfig is decoded by it alone; it was validated with cfg.
func CopyPlaceOf(p provider.Provider, cfg provider.Config, primary string) (*CopyPlace, error) {
	s := cfg.CopySettings()
	if s == nil {
		return nil, nil
	}
	store, err := provider.CopyStore(p, s.Type)
	if err != nil {
		return nil, err
	}
	copyCfg, err := store.Decode(s.RawProviderConfig())
	if err != nil {
		return nil, fmt.Errorf("copy.providerConfig: %w", err)
	}
	return &CopyPlace{
		Settings: s,
		Bucket:   s.Bucket(primary),
		Region:   s.Region,
		Secret:   corev1.SecretReference{Namespace: copystore.CredentialsNamespace, Name: s.CredentialsSecret()},
		Config:   copyCfg,
		Provider: store,

		primaryType: p.Type(),
	}, nil
}

// NewDataPlane builds the copy store's data plane with the copy's provider and credentials. p,
// the primary's provider, is not used (c.Provider is the copy's); it stays for the callers.
func (c *CopyPlace) NewDataPlane(ctx context.Context, reader client.Reader, _ provider.Provider) (objectstore.DataPlane, error) {
	data, err := NewDataPlane(ctx, reader, c.Provider, c.Secret, c.Region)
	return data, c.credentialsError(err)
}

// NewManagement builds the copy store's management plane with the copy's credentials and its
// providerConfig.
func (c *CopyPlace) NewManagement(ctx context.Context, reader client.Reader) (objectstore.Management, error) {
	mgmt, err := NewManagement(ctx, reader, c.Secret, c.Region, c.Config)
	return mgmt, c.credentialsError(err)
}

// ErrCopySecretMissing marks a copy's credentials secret that is not (yet) in the seed.
var ErrCopySecretMissing = errors.New("the copy's credentials secret is missing")

// copyCredentialsError names, for a copy's missing credentials secret, the Seed's field that
// brings it (ErrCopySecretMissing); other errors are returned as they are.
func (c *CopyPlace) credentialsError(err error) error {
	if err == nil || !errors.As(err, new(*secrets.MissingError)) {
		return err
	}
	return fmt.Errorf("%w: %s/%s does not exist: list the Secret %q in the Seed's spec.resources (gardenlet copies it into the seed as %s) (%w)",
		ErrCopySecretMissing, c.Secret.Namespace, c.Secret.Name, c.Settings.CredentialsRef, c.Secret.Name, objectstore.ErrInvalidConfig)
}
