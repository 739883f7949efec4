// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package secrets reads credentials secrets from the API server, uncached (a seed holds thousands):
// whether one exists, its contents, and the error that names a missing one.
package secrets

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// MissingError names a credentials secret that does not exist. It matches
// objectstore.ErrInvalidConfig.
type MissingError struct {
	Ref corev1.SecretReference
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("spec.secretRef: credentials secret %s/%s does not exist", e.Ref.Namespace, e.Ref.Name)
}

// Is makes errors.Is(err, objectstore.ErrInvalidConfig) true.
func (e *MissingError) Is(target error) bool { return target == objectstore.ErrInvalidConfig }

// Exists reads a secret's existence from the API server (secrets are not cached).
func Exists(ctx context.Context, reader client.Reader, ref corev1.SecretReference) (bool, error) {
	err := reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &corev1.Secret{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("reading credentials secret %s/%s: %w", ref.Namespace, ref.Name, err)
}

// Read reads the credentials secret ref; a missing one is a *MissingError.
func Read(ctx context.Context, reader client.Reader, ref corev1.SecretReference) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &MissingError{Ref: ref}
		}
		return nil, fmt.Errorf("reading credentials secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return secret, nil
}
