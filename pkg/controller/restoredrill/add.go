// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
)

// DrillController is the restore drill of a provider's BackupEntries as a periodic controller:
// the sources are the provider's stores with each entry's own credentials (StoreSource), restores
// run by restore (ChildRestorer in the binary). Switched off (Options.Interval 0), its one look at
// each entry removes what earlier drills published there. Besides the skeleton's wake-ups, a
// change of the chains the inventory found by names wakes it.
//
// It has Concurrency+1 workers: Concurrency drilling at most, one left for the cheap looks
// (schedules, deletions) while they run.
func DrillController(opts Options, restore Restorer) periodic.Controller {
	return periodic.Controller{
		Name: "backupentry-restoredrill", Recorder: "backupentry-restoredrill", For: &extensionsv1alpha1.BackupEntry{},
		Workers:  max(opts.Concurrency, 1) + 1,
		WakeAlso: []predicate.Predicate{chainsChanged()},
		New: func(d periodic.Deps) reconcile.Reconciler {
			return NewReconciler(Deps{Deps: d, Options: opts, SourceFor: StoreSource(d.Reader, d.Provider), Restore: restore,
				Slots: make(chan struct{}, max(opts.Concurrency, 1))})
		},
	}
}
