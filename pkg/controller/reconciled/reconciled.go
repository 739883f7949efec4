// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package reconciled reads the object a reconcile request names.
package reconciled

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// GetOrForget reads req's object into obj. A gone object is not an error: found is false, after
// forget (if set) dropped what the process kept of it (its metrics).
func GetOrForget(ctx context.Context, c client.Reader, req reconcile.Request, obj client.Object, forget func(name string)) (found bool, err error) {
	if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) && forget != nil {
			forget(req.Name)
		}
		return false, client.IgnoreNotFound(err)
	}
	return true, nil
}
