// Package controller is what the BackupBucket and BackupEntry controllers share at their root:
// stores and credential issuers built from a credentials secret read from the API server, a
// BackupBucket's decoded providerConfig, and the options both controllers are added with. Its
// subpackages hold the rest by concern: lasterror (errors to Gardener codes and requeues),
// extstatus (status writes), periodic (the probe's and the inventory's scaffolding), predicates.
package controller

import (
	"context"
	"fmt"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	securityv1alpha1constants "github.com/gardener/gardener/pkg/apis/security/v1alpha1/constants"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// NewStore reads the credentials secret directly from the API server (secrets are never cached:
// a seed holds thousands) and builds the provider's store for this one request with the bucket's
// providerConfig (nil: the defaults).
func NewStore(ctx context.Context, reader client.Reader, p provider.Provider, ref corev1.SecretReference, region string, cfg config.Bucket) (objectstore.Store, error) {
	creds, err := readCredentials(ctx, reader, ref, region)
	if err != nil {
		return nil, err
	}
	store, err := p.NewStore(ctx, creds, cfg)
	if err != nil {
		return nil, fmt.Errorf("credentials secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return metrics.Store(store), nil
}

// NewIssuer reads the credentials secret as NewStore does and builds the provider's issuer named
// issuer, or nil where these credentials issue none.
func NewIssuer(ctx context.Context, reader client.Reader, p provider.Provider, ref corev1.SecretReference, region string, cfg config.Bucket, issuer string) (objectstore.CredentialIssuer, error) {
	creds, err := readCredentials(ctx, reader, ref, region)
	if err != nil {
		return nil, err
	}
	iss, err := p.NewIssuer(ctx, creds, cfg, issuer)
	if err != nil {
		return nil, fmt.Errorf("credentials secret %s/%s, issuer %q: %w", ref.Namespace, ref.Name, issuer, err)
	}
	return metrics.Issuer(iss), nil
}

// readCredentials reads the credentials secret from the API server.
func readCredentials(ctx context.Context, reader client.Reader, ref corev1.SecretReference, region string) (provider.Credentials, error) {
	secret, err := readSecret(ctx, reader, ref)
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
// errors name the field under "spec". Callers that must go on with an invalid config (deletion,
// deferral, the scheduler) use the defaults (nil) instead.
func BucketConfig(p provider.Provider, bb *extensionsv1alpha1.BackupBucket) (config.Bucket, error) {
	var raw []byte
	if bb.Spec.ProviderConfig != nil {
		raw = bb.Spec.ProviderConfig.Raw
	}
	cfg, err := p.DecodeBucketConfig(raw)
	if err != nil {
		return nil, decode.Under(err, "spec")
	}
	return cfg, nil
}

// ReadSecretData reads the data of the credentials secret ref from the API server.
func ReadSecretData(ctx context.Context, reader client.Reader, ref corev1.SecretReference) (map[string][]byte, error) {
	secret, err := readSecret(ctx, reader, ref)
	if err != nil {
		return nil, err
	}
	return secret.Data, nil
}

func readSecret(ctx context.Context, reader client.Reader, ref corev1.SecretReference) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &MissingSecretError{Ref: ref}
		}
		return nil, fmt.Errorf("reading credentials secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return secret, nil
}
