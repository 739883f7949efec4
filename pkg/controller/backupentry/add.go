package backupentry

import (
	"context"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	corecontroller "github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// AddToManager registers the BackupEntry controller for p's type with gardener's library.
func AddToManager(_ context.Context, mgr manager.Manager, p provider.Provider, opts corecontroller.AddOptions) error {
	recorder := mgr.GetEventRecorder("backupentry-" + p.Type())
	return backupentry.Add(mgr, backupentry.AddArgs{
		Actuator:                  genericactuator.NewActuator(mgr, NewDelegate(p, mgr.GetAPIReader(), recorder, opts.Deletion)),
		ControllerOptions:         opts.Controller,
		Predicates:                backupentry.DefaultPredicates(opts.IgnoreOperationAnnotation),
		Type:                      p.Type(),
		IgnoreOperationAnnotation: opts.IgnoreOperationAnnotation,
		ExtensionClasses:          opts.ExtensionClasses,
	})
}
