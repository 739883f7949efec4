// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package reconciled reads the object a reconcile request names, and asks gardener's library
// controllers for a reconcile of one.
package reconciled

import (
	"context"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
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

// RequestReconcile sets gardener's operation annotation gardener.cloud/operation=reconcile on
// obj unless it has one, as gardenlet does: the library's controllers, whose default predicates
// pass an update only with that annotation, then reconcile obj once and remove it.
func RequestReconcile(ctx context.Context, c client.Client, obj client.Object) error {
	if obj.GetAnnotations()[v1beta1constants.GardenerOperation] != "" {
		return nil
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[v1beta1constants.GardenerOperation] = v1beta1constants.GardenerOperationReconcile
	obj.SetAnnotations(annotations)
	return c.Patch(ctx, obj, patch)
}
