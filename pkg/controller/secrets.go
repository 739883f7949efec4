package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// MissingSecretError names a credentials secret that does not exist. It matches
// objectstore.ErrInvalidConfig.
type MissingSecretError struct {
	Ref corev1.SecretReference
}

func (e *MissingSecretError) Error() string {
	return fmt.Sprintf("spec.secretRef: credentials secret %s/%s does not exist", e.Ref.Namespace, e.Ref.Name)
}

// Is makes errors.Is(err, objectstore.ErrInvalidConfig) true.
func (e *MissingSecretError) Is(target error) bool { return target == objectstore.ErrInvalidConfig }

// SecretExists reads a secret's existence from the API server (secrets are not cached).
func SecretExists(ctx context.Context, reader client.Reader, ref corev1.SecretReference) (bool, error) {
	err := reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &corev1.Secret{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("reading credentials secret %s/%s: %w", ref.Namespace, ref.Name, err)
}
