// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package connect builds what a BackupBucket or BackupEntry reconcile reaches its provider with:
// the data plane, management plane or credential issuer of its credentials secret (read from the
// API server for each request), and the decoded providerConfig (provider.Config) they are built
// with.
package connect

import (
	"context"
	"fmt"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	securityv1alpha1constants "github.com/gardener/gardener/pkg/apis/security/v1alpha1/constants"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// NewDataPlane reads the credentials secret directly from the API server (secrets are never
// cached: a seed holds thousands) and builds the provider's data plane for this one request.
// Its calls are named for the metrics where they are made (objectstore.WithOperation).
func NewDataPlane(ctx context.Context, reader client.Reader, p provider.Provider, ref corev1.SecretReference, region string) (objectstore.DataPlane, error) {
	return build(ctx, reader, ref, region, "", p.NewDataPlane)
}

// NewManagement reads the credentials secret as NewDataPlane does and builds the provider's
// management plane for a bucket whose providerConfig is cfg.
func NewManagement(ctx context.Context, reader client.Reader, ref corev1.SecretReference, region string, cfg provider.Config) (objectstore.Management, error) {
	return build(ctx, reader, ref, region, "", cfg.NewManagement)
}

// NewIssuer reads the credentials secret as NewDataPlane does and builds the provider's issuer
// named issuer with cfg, or nil where these credentials issue none.
func NewIssuer(ctx context.Context, reader client.Reader, ref corev1.SecretReference, region string, cfg provider.Config, issuer string) (objectstore.CredentialIssuer, error) {
	return build(ctx, reader, ref, region, fmt.Sprintf(", issuer %q", issuer), func(ctx context.Context, creds provider.Credentials) (objectstore.CredentialIssuer, error) {
		return cfg.NewIssuer(ctx, creds, issuer)
	})
}

// NewEntryIssuer reads the credentials secret as NewDataPlane does and builds the provider's
// entry issuer named issuer with cfg, or nil where the provider or these credentials issue none.
func NewEntryIssuer(ctx context.Context, reader client.Reader, ref corev1.SecretReference, region string, cfg provider.Config, issuer string) (objectstore.EntryCredentialIssuer, error) {
	return build(ctx, reader, ref, region, fmt.Sprintf(", entry issuer %q", issuer), func(ctx context.Context, creds provider.Credentials) (objectstore.EntryCredentialIssuer, error) {
		return cfg.NewEntryIssuer(ctx, creds, issuer)
	})
}

// build reads the credentials secret ref and builds a plane or issuer of it with newT, whose
// errors it names with the secret (and what, if set).
func build[T any](ctx context.Context, reader client.Reader, ref corev1.SecretReference, region, what string, newT func(context.Context, provider.Credentials) (T, error)) (T, error) {
	var none T
	creds, err := readCredentials(ctx, reader, ref, region)
	if err != nil {
		return none, err
	}
	t, err := newT(ctx, creds)
	if err != nil {
		return none, fmt.Errorf("credentials secret %s/%s%s: %w", ref.Namespace, ref.Name, what, err)
	}
	return t, nil
}

// readCredentials reads the credentials secret from the API server.
func readCredentials(ctx context.Context, reader client.Reader, ref corev1.SecretReference, region string) (provider.Credentials, error) {
	secret, err := secrets.Read(ctx, reader, ref)
	if err != nil {
		return provider.Credentials{}, err
	}
	return provider.Credentials{
		Data:             secret.Data,
		WorkloadIdentity: secret.Labels[securityv1alpha1constants.LabelPurpose] == securityv1alpha1constants.LabelPurposeWorkloadIdentityTokenRequestor,
		Region:           region,
	}, nil
}

// BucketConfig decodes a BackupBucket's providerConfig with the provider's strict decoding; its
// errors name the field under "spec". On an error it returns the provider's defaults beside it,
// for callers that must go on with an invalid config (deletion, deferral, the scheduler).
func BucketConfig(p provider.Provider, bb *extensionsv1alpha1.BackupBucket) (provider.Config, error) {
	return decodeUnderSpec(p, bb.Spec.ProviderConfig)
}

// EntryConfig decodes a BackupEntry's providerConfig (gardenlet's copy of its bucket's) as
// BucketConfig does: what an entry's management plane (its deferral) and its inventory's
// freshness are built with.
func EntryConfig(p provider.Provider, be *extensionsv1alpha1.BackupEntry) (provider.Config, error) {
	return decodeUnderSpec(p, be.Spec.ProviderConfig)
}

func decodeUnderSpec(p provider.Provider, raw *runtime.RawExtension) (provider.Config, error) {
	var data []byte
	if raw != nil {
		data = raw.Raw
	}
	cfg, err := p.Decode(data)
	if err != nil {
		return cfg, decode.Under(err, "spec")
	}
	return cfg, nil
}
