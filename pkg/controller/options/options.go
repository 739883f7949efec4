// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package options holds the settings both controllers are added with (AddOptions) and the
// deletion engine's settings they share (DeletionOptions).
package options

import (
	"context"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// AddOptions configure every controller (the periodic ones take their own options besides).
type AddOptions struct {
	Controller                ctrlcontroller.Options
	IgnoreOperationAnnotation bool
	ExtensionClasses          []extensionsv1alpha1.ExtensionClass
	Deletion                  DeletionOptions
}

// DeletionOptions are the deletion engine's settings shared by both controllers.
type DeletionOptions struct {
	// Parallelism is the most delete requests in flight per deletion.
	Parallelism int
}

// DeleteOptions are the deletion engine's options for one reconcile bound by ctx's deadline
// (gardener's default reconcile timeout is 3 minutes): the engine stops starting requests at
// Deadline (a fifth of the time, at least 5s, before the end), abandons requests still in flight
// at Cutoff (a tenth, at least 2s, before the end) and so leaves the reconciler time to write the
// "in progress" status that makes the next reconcile resume.
func (o DeletionOptions) DeleteOptions(ctx context.Context) objectstore.DeleteOptions {
	d, ok := ctx.Deadline()
	if !ok {
		now := time.Now()
		return objectstore.DeleteOptions{Parallelism: o.Parallelism, Deadline: now.Add(2 * time.Minute), Cutoff: now.Add(150 * time.Second)}
	}
	remaining := time.Until(d)
	return objectstore.DeleteOptions{
		Parallelism: o.Parallelism,
		Deadline:    d.Add(-min(max(remaining/5, 5*time.Second), remaining/2)),
		Cutoff:      d.Add(-min(max(remaining/10, 2*time.Second), remaining/4)),
	}
}
