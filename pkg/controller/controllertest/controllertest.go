// Package controllertest holds what the unit tests of the provider-neutral controllers share: a
// provider over an in-memory store and a fake API server holding the credentials secret.
package controllertest

import (
	"context"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Provider serves type "mem" with Store, whatever the credentials.
type Provider struct{ Store objectstore.Store }

var _ provider.Provider = Provider{}

// Type implements provider.Provider.
func (Provider) Type() string { return "mem" }

// DecodeBucketConfig implements provider.Provider: no providerConfig.
func (Provider) DecodeBucketConfig([]byte) (any, error) { return nil, nil }

// ValidateBucketName implements provider.Provider: every name is valid.
func (Provider) ValidateBucketName(string) error { return nil }

// NewStore implements provider.Provider.
func (p Provider) NewStore(context.Context, provider.Credentials) (objectstore.Store, error) {
	return p.Store, nil
}

// EtcdBackupSecretData implements provider.Provider: the data as it is.
func (Provider) EtcdBackupSecretData(_ *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	return data, nil
}

// SecretRef is the credentials secret that Client holds.
var SecretRef = corev1.SecretReference{Namespace: "garden", Name: "backup-credentials"}

// Client returns a fake API server holding the credentials secret.
func Client() client.Client {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = extensionsv1alpha1.AddToScheme(scheme)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: SecretRef.Namespace, Name: SecretRef.Name}, Data: map[string][]byte{"key": []byte("value")}}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build()
}
