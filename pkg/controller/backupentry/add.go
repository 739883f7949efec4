// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// AddToManager registers the BackupEntry controller for p's type with gardener's library, its
// actuator holding the entry (FinalizerName) until its objects are deleted, and the orphan guard
// for entries whose credentials secret is gone, and
// the scheduler of entry credential rotations. The inventory behind the BackupsFresh condition is
// a periodic controller of its own (entryinventory.InventoryController). The controller also
// watches the shoots' Etcds (addController).
func AddToManager(_ context.Context, mgr manager.Manager, p provider.Provider, opts options.AddOptions) error {
	recorder := mgr.GetEventRecorder("backupentry-" + p.Type())
	d := newDelegate(p, mgr.GetAPIReader(), mgr.GetClient(), recorder, opts.Deletion)
	if err := addOrphanGuard(mgr, p, d, opts); err != nil {
		return err
	}
	if err := entrycredentials.AddRotationScheduler(mgr, d.creds, opts); err != nil {
		return err
	}
	return addController(mgr, backupentry.AddArgs{
		Actuator:                  &holdingActuator{Actuator: genericactuator.NewActuator(mgr, d), manager: mgr, client: mgr.GetClient(), reader: mgr.GetAPIReader(), provider: p, entries: d},
		ControllerOptions:         opts.Controller,
		Predicates:                backupentry.DefaultPredicates(opts.IgnoreOperationAnnotation),
		Type:                      p.Type(),
		IgnoreOperationAnnotation: opts.IgnoreOperationAnnotation,
		ExtensionClasses:          opts.ExtensionClasses,
	})
}
