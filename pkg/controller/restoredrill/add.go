// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/predicates"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// AddToManager registers the restore drills of p's BackupEntries: the sources are p's stores
// with each entry's own credentials (StoreSource), restores run by restore (ChildRestorer in the
// binary). Switched off (Options.Interval 0), it is registered all the same: its one look at each
// entry removes what earlier drills published there.
//
// It has Concurrency+1 workers: Concurrency drilling at most, one left for the cheap looks
// (schedules, deletions) while they run.
func AddToManager(mgr manager.Manager, p provider.Provider, classes []extensionsv1alpha1.ExtensionClass, ctrlOpts ctrlcontroller.Options, opts Options, restore Restorer) error {
	deps := Deps{
		Client:    mgr.GetClient(),
		Reader:    mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("backupentry-restoredrill-" + p.Type()),
		Options:   opts,
		SourceFor: StoreSource(mgr.GetAPIReader(), p),
		Restore:   restore,
		Slots:     make(chan struct{}, max(opts.Concurrency, 1)),
	}
	return builder.ControllerManagedBy(mgr).
		Named("backupentry-restoredrill-"+p.Type()).
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: max(opts.Concurrency, 1) + 1, SkipNameValidation: ctrlOpts.SkipNameValidation}).
		For(&extensionsv1alpha1.BackupEntry{}, builder.WithPredicates(
			predicateutils.HasType(p.Type()), predicateutils.HasClass(classes...), predicate.Or(predicates.SpecOrOperationChanged(), chainsChanged()))).
		Complete(NewReconciler(deps))
}
