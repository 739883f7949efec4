// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"

	"github.com/gardener/gardener/extensions/pkg/controller/backupbucket"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// AddToManager registers the BackupBucket controller for p's type with gardener's library,
// which owns finalizers, status and the operation annotation, and the scheduler that requests
// reconciles when generated credentials fall due. The probe behind the BucketAvailable condition
// is a periodic controller of its own (ProbeController).
func AddToManager(_ context.Context, mgr manager.Manager, p provider.Provider, opts options.AddOptions) error {
	recorder := mgr.GetEventRecorder("backupbucket-" + p.Type())
	if err := addScheduler(mgr, p, opts); err != nil {
		return err
	}
	if err := addSecretWatch(mgr, p, recorder, opts); err != nil {
		return err
	}
	if err := addCopySecretWatch(mgr, p, opts); err != nil {
		return err
	}
	return backupbucket.Add(mgr, backupbucket.AddArgs{
		Actuator:                  NewActuator(p, mgr.GetAPIReader(), mgr.GetClient(), recorder, opts.Deletion),
		ControllerOptions:         opts.Controller,
		Predicates:                backupbucket.DefaultPredicates(opts.IgnoreOperationAnnotation),
		Type:                      p.Type(),
		IgnoreOperationAnnotation: opts.IgnoreOperationAnnotation,
		ExtensionClasses:          opts.ExtensionClasses,
	})
}
