// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package provider defines what one cloud plugs into the provider-neutral backup controllers: a
// Cloud, written with the cloud's own providerConfig type, and Register, which turns it into the
// Provider the core is written against.
package provider

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/spf13/pflag"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Cloud is one cloud's implementation, written with its own decoded BackupBucket providerConfig
// type C (a pointer to the provider's config struct). It holds no per-request state: the
// controllers call it from several workers at once. Every constructor is called per request
// and must not cache clients across requests; missing or malformed secret keys return
// objectstore.ErrInvalidConfig naming the key, never its value.
type Cloud[C config.ProviderConfig] interface {
	// Type is the extension type (spec.type) the cloud serves, for example "aws".
	Type() string

	// ValidateBucketName checks the store's naming rules for a bucket without any call. Errors
	// wrap objectstore.ErrInvalidConfig and name the rule broken.
	ValidateBucketName(name string) error

	// Decode strictly decodes and validates a providerConfig. Empty input is the provider's
	// defaults and never fails; a returned config is never nil (no typed nil stands for the
	// defaults). Errors wrap objectstore.ErrInvalidConfig and name the offending field path
	// under "providerConfig".
	Decode(raw []byte) (C, error)

	// NewDataPlane builds the data plane of a credentials secret: listing, deletion, probing,
	// reading. It needs no providerConfig (a BackupEntry's secret and a bucket name are enough).
	NewDataPlane(ctx context.Context, creds Credentials) (objectstore.DataPlane, error)

	// NewManagement builds the management plane of a credentials secret for a bucket whose
	// providerConfig is cfg, which EnsureBucket converges to.
	NewManagement(ctx context.Context, creds Credentials, cfg C) (objectstore.Management, error)

	// NewIssuer builds the issuer named issuer (a name cfg's GenerationSettings returned, or one
	// a generated secret recorded) from the same credentials, to issue, rotate or revoke the
	// bucket's generated credentials. cfg may ask for no generated credentials: the issuer is
	// then used only to revoke. It returns a nil issuer without an error where these credentials
	// issue none (shoots use the operator's credentials, for example an Azure account key
	// secret), and objectstore.ErrInvalidConfig for a name the provider does not know, the empty
	// name included: every generated secret records the name of its issuer.
	NewIssuer(ctx context.Context, creds Credentials, cfg C, issuer string) (objectstore.CredentialIssuer, error)

	// EtcdBackupSecretData returns the data of the shoot's etcd-backup secret: exactly the keys
	// etcd-backup-restore reads, from the entry secret's data (which gardener's generic actuator
	// has already given the bucketName key).
	EtcdBackupSecretData(entry *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error)

	// Flags returns the cloud's own command-line flags, bound to this Cloud, or nil where it has
	// none (each provider's Flags). pkg/app calls it once, when it builds the command.
	Flags() Flags
}

// Flags are a provider's own command-line flags beside the common ones (its binary's, say
// azure's --azure-cloud-config). The method set is gardener's extensionscmd.Option, so that
// pkg/app aggregates them with its own options: AddFlags before parsing, Complete after it.
type Flags interface {
	// AddFlags adds the flags to fs.
	AddFlags(fs *pflag.FlagSet)
	// Complete checks the parsed flags and sets them on the Cloud that returned them, before
	// anything starts. An error stops the binary; it names the flag and, for a file, the file,
	// never a value read from it.
	Complete() error
}

// EntryIssuing is implemented by a Cloud that can issue per-entry credentials
// (objectstore.EntryCredentialIssuer); Register binds it when present. A Cloud without it gives
// every entry the bucket's credential, and the entry's EntryCredentials condition says so.
type EntryIssuing[C config.ProviderConfig] interface {
	// NewEntryIssuer builds the entry issuer named issuer (a name the config's
	// EntryCredentialSettings returned, or one an etcd-backup secret recorded) from the
	// operator's credentials, as NewIssuer does for the bucket's. It returns nil without an
	// error where these credentials issue none, and objectstore.ErrInvalidConfig for a name the
	// provider does not know.
	NewEntryIssuer(ctx context.Context, creds Credentials, cfg C, issuer string) (objectstore.EntryCredentialIssuer, error)
}

// Provider is a Cloud with its config type erased (Register): what the controllers are written
// against. A decoded providerConfig is a Config, which builds the management plane and issuers
// with the typed config it holds, so that no provider asserts a type.
type Provider interface {
	// Type is Cloud.Type.
	Type() string
	// ValidateBucketName is Cloud.ValidateBucketName.
	ValidateBucketName(name string) error
	// Decode decodes a providerConfig with Cloud.Decode (merged with the seed configuration in
	// force: Seeded). On an error it returns the provider's defaults (the seed configuration's)
	// beside it, for callers that must go on without a valid config (a deletion, a
	// deferral, the scheduler). A Cloud whose defaults do not decode is a programming error
	// (provider/all's test decodes every registered provider's).
	Decode(raw []byte) (Config, error)
	// NewDataPlane is Cloud.NewDataPlane.
	NewDataPlane(ctx context.Context, creds Credentials) (objectstore.DataPlane, error)
	// EtcdBackupSecretData is Cloud.EtcdBackupSecretData.
	EtcdBackupSecretData(entry *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error)
	// Flags is Cloud.Flags: nil where the provider has no flags of its own.
	Flags() Flags
}

// Config is a BackupBucket's providerConfig as its provider decoded it: the settings the core
// reads (config.ProviderConfig: generated credentials, freshness, hand-back) and the constructors that
// need the typed config. Only Provider.Decode makes one.
type Config struct {
	config.ProviderConfig

	management  func(context.Context, Credentials) (objectstore.Management, error)
	issuer      func(context.Context, Credentials, string) (objectstore.CredentialIssuer, error)
	entryIssuer func(context.Context, Credentials, string) (objectstore.EntryCredentialIssuer, error)
}

// NewManagement builds the management plane of creds for a bucket with this config
// (Cloud.NewManagement).
func (c Config) NewManagement(ctx context.Context, creds Credentials) (objectstore.Management, error) {
	return c.management(ctx, creds)
}

// NewIssuer builds the issuer named issuer from creds with this config (Cloud.NewIssuer).
func (c Config) NewIssuer(ctx context.Context, creds Credentials, issuer string) (objectstore.CredentialIssuer, error) {
	return c.issuer(ctx, creds, issuer)
}

// NewEntryIssuer builds the entry issuer named issuer from creds with this config
// (EntryIssuing.NewEntryIssuer); nil without an error when the provider issues none.
func (c Config) NewEntryIssuer(ctx context.Context, creds Credentials, issuer string) (objectstore.EntryCredentialIssuer, error) {
	if c.entryIssuer == nil {
		return nil, nil
	}
	return c.entryIssuer(ctx, creds, issuer)
}

// IssuesEntryCredentials reports whether the provider can issue per-entry credentials at all
// (it implements EntryIssuing); a config of one that cannot never asks for them.
func (c Config) IssuesEntryCredentials() bool { return c.entryIssuer != nil }

// Register erases the config type of a Cloud: the one adapter between a provider and the core.
func Register[C config.ProviderConfig](c Cloud[C]) Provider { return registered[C]{c} }

// registered is a Cloud whose Decode binds the typed config into a Config; every other method is
// the Cloud's own.
type registered[C config.ProviderConfig] struct{ Cloud[C] }

func (r registered[C]) Decode(raw []byte) (Config, error) {
	cfg, err := r.Cloud.Decode(raw)
	if err != nil {
		defaults, derr := r.Cloud.Decode(nil)
		if derr != nil {
			panic("provider " + r.Type() + ": decoding the defaults failed: " + derr.Error())
		}
		return r.bind(defaults), err
	}
	return r.bind(cfg), nil
}

func (r registered[C]) bind(cfg C) Config {
	var entryIssuer func(context.Context, Credentials, string) (objectstore.EntryCredentialIssuer, error)
	if e, ok := r.Cloud.(EntryIssuing[C]); ok {
		entryIssuer = func(ctx context.Context, creds Credentials, name string) (objectstore.EntryCredentialIssuer, error) {
			return e.NewEntryIssuer(ctx, creds, cfg, name)
		}
	}
	return Config{
		entryIssuer:    entryIssuer,
		ProviderConfig: cfg,
		management: func(ctx context.Context, creds Credentials) (objectstore.Management, error) {
			return r.NewManagement(ctx, creds, cfg)
		},
		issuer: func(ctx context.Context, creds Credentials, name string) (objectstore.CredentialIssuer, error) {
			return r.NewIssuer(ctx, creds, cfg, name)
		},
	}
}

// Seeded is a Provider whose Decode reads every providerConfig (a BackupBucket's, and a
// BackupEntry's copy of it) merged with the seed configuration in force: the merge and its
// precedence are decode.WithSeedConfig's. The configuration in force changes at run time (Apply,
// Await), and every Decode reads the newest: the BackupBucket and BackupEntry reconcilers use it
// from their next reconcile on, without a restart. Safe for concurrent use.
type Seeded struct {
	Provider

	incumbentFields []string
	// defaults are the landscape's (the ControllerDeployment's values), under every seed's.
	defaults []byte
	state    atomic.Pointer[seedState]
	// copyStores are the providers of other types a copy is written with (SetCopyStores).
	copyStores map[string]Provider
}

// seedState is what the Seeded reads at each call: one pointer, replaced whole.
type seedState struct {
	// config is the seed configuration in force: the defaults overlaid with the seed's Extension
	// (decode.Overlay), valid; empty: none.
	config []byte
	// pending, when set, stops every Decode and plane constructor: the seed declares an
	// Extension whose configuration is not applied yet.
	pending *SeedConfigPendingError
}

// WithSeedConfig returns p as a Seeded whose configuration in force is defaults, the landscape's
// seed configuration (empty: none), until Apply or Await. incumbentFields are refused in every
// seed configuration (config.API's IncumbentFields). defaults that do not decode on their own are
// an error (wrapping objectstore.ErrInvalidConfig), so that the binary refuses to start with them
// rather than reconcile without what the operator set.
func WithSeedConfig(p Provider, defaults []byte, incumbentFields []string) (*Seeded, error) {
	s := &Seeded{Provider: p, incumbentFields: incumbentFields, defaults: defaults}
	if _, err := decode.WithSeedConfig(p.Decode, nil, defaults, "defaults", s.Type(), incumbentFields); err != nil {
		return nil, err
	}
	s.state.Store(&seedState{config: defaults})
	return s, nil
}

// Apply makes the seed's configuration seedConfig (the providerConfig of its Extension, empty:
// none) the one in force, over the defaults, and ends a wait (Await). A configuration that does not
// decode is refused with its problems named from seedConfigAt on (the field path of the
// providerConfig where it lives) and objectstore.ErrInvalidConfig; the configuration in force
// stays as it was, so that a bad change never stops backups.
func (s *Seeded) Apply(seedConfig []byte, seedConfigAt string) error {
	if _, err := decode.WithSeedConfig(s.Provider.Decode, nil, seedConfig, seedConfigAt, s.Type(), s.incumbentFields); err != nil {
		return err
	}
	inForce, err := decode.Overlay(s.defaults, seedConfig)
	if err != nil {
		return decode.Under(err, strings.TrimSuffix(seedConfigAt, ".providerConfig"))
	}
	if _, err := decode.WithSeedConfig(s.Provider.Decode, nil, inForce, seedConfigAt, s.Type(), s.incumbentFields); err != nil {
		return fmt.Errorf("%w (%s over the landscape's defaults, the ControllerDeployment's values)", err, seedConfigAt)
	}
	s.state.Store(&seedState{config: inForce})
	return nil
}

// Await stops every Decode and plane constructor with a *SeedConfigPendingError saying reason
// until the next Apply: the seed declares an Extension whose configuration is not applied yet,
// and nothing may act on the defaults meanwhile (revoke, sweep, hand back).
func (s *Seeded) Await(reason string) {
	s.state.Store(&seedState{pending: &SeedConfigPendingError{Reason: reason}})
}

// InForce returns the seed configuration in force (empty: none), or the wait's error.
func (s *Seeded) InForce() ([]byte, error) {
	st := s.state.Load()
	if st.pending != nil {
		return nil, st.pending
	}
	return st.config, nil
}

// Decode is the provider's decoding of raw merged with the seed configuration in force. On an
// error, the config beside it is the seed configuration's alone (the operator's settings for this
// seed, for example handBack, rather than the bare defaults); while the seed configuration is
// awaited, it is the defaults with every constructor failing with the wait's error.
func (s *Seeded) Decode(raw []byte) (Config, error) {
	st := s.state.Load()
	if st.pending != nil {
		cfg, _ := s.Provider.Decode(nil)
		return cfg.failing(st.pending), st.pending
	}
	cfg, err := decode.WithSeedConfig(s.Provider.Decode, raw, st.config, "seed configuration", s.Type(), s.incumbentFields)
	if err != nil {
		fallback, _ := s.Provider.Decode(st.config) // decoded without an error in Apply
		return fallback, err
	}
	return cfg, nil
}

// NewDataPlane is the provider's, except while the seed configuration is awaited.
func (s *Seeded) NewDataPlane(ctx context.Context, creds Credentials) (objectstore.DataPlane, error) {
	if st := s.state.Load(); st.pending != nil {
		return nil, st.pending
	}
	return s.Provider.NewDataPlane(ctx, creds)
}

// EtcdBackupSecretData is the provider's, except while the seed configuration is awaited.
func (s *Seeded) EtcdBackupSecretData(entry *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	if st := s.state.Load(); st.pending != nil {
		return nil, st.pending
	}
	return s.Provider.EtcdBackupSecretData(entry, data)
}

// SeedConfigPendingError stops a reconcile while the seed declares this extension's Extension
// and its configuration is not applied yet: nothing is done with the defaults meanwhile. Its
// Gardener error code is ERR_RETRYABLE_CONFIGURATION_PROBLEM.
type SeedConfigPendingError struct {
	// Reason says what is awaited.
	Reason string
}

func (e *SeedConfigPendingError) Error() string {
	return "waiting for this seed's configuration: " + e.Reason + "; nothing is done with the defaults meanwhile"
}

// Codes is the error's Gardener error code (v1beta1helper.Coder), for status.lastError.codes.
func (e *SeedConfigPendingError) Codes() []gardencorev1beta1.ErrorCode {
	return []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorRetryableConfigurationProblem}
}

// failing returns c with every constructor failing with err.
func (c Config) failing(err error) Config {
	c.management = func(context.Context, Credentials) (objectstore.Management, error) { return nil, err }
	c.issuer = func(context.Context, Credentials, string) (objectstore.CredentialIssuer, error) { return nil, err }
	if c.entryIssuer != nil {
		c.entryIssuer = func(context.Context, Credentials, string) (objectstore.EntryCredentialIssuer, error) { return nil, err }
	}
	return c
}

// Credentials is a credentials secret as the provider sees it.
type Credentials struct {
	// Data is the secret's data.
	Data map[string][]byte
	// WorkloadIdentity is true for a workload identity secret (data keys "config" and "token").
	WorkloadIdentity bool
	// Region is the bucket's region (spec.region), for clients that need one.
	Region string
}
