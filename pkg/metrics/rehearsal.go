// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The rehearsal's gauges (--rehearse): one series per BackupBucket and BackupEntry of the last
// rehearsal, all replaced by each (RecordRehearsal), so that an object gone since leaves none.
var (
	// RehearsalAdoptable is 1 for an object this extension can adopt, 0 for one it cannot;
	// absent where the rehearsal cannot tell (RehearsalCannotTell).
	RehearsalAdoptable = newGauge("rehearsal_adoptable",
		"1 when the rehearsal finds that this extension can take over a BackupBucket or BackupEntry, 0 when it cannot (the reason is in the rehearsal's ConfigMap); absent when it cannot tell.",
		"kind", "name")
	// RehearsalCannotTell is 1 for an object whose adoption the rehearsal could not judge (a
	// secret or the store unreadable).
	RehearsalCannotTell = newGauge("rehearsal_cannot_tell",
		"1 when the rehearsal cannot tell whether a BackupBucket or BackupEntry can be taken over (its cause is in the rehearsal's ConfigMap).",
		"kind", "name")
	// RehearsalPlannedChanges counts the changes the first reconcile would make, by action
	// (create, update, delete).
	RehearsalPlannedChanges = newGauge("rehearsal_planned_changes",
		"Changes this extension's first reconcile would make to a BackupBucket's bucket (settings) or a BackupEntry (its etcd-backup secret's keys, its credentials), by action: create, update, delete.",
		"kind", "name", "change")
	// RehearsalRestorable is 1 for a BackupEntry whose restore drill in the rehearsal restored
	// every etcd, 0 for one found not restorable; absent where it was not drilled or the drill
	// proved nothing.
	RehearsalRestorable = newGauge("rehearsal_backups_restorable",
		"1 when the rehearsal's restore drill (rehearsal.restoreDrills) restored the newest backup of every etcd of a BackupEntry, 0 when it found one not restorable (the reason is in the rehearsal's ConfigMap); absent when not drilled or nothing was proven.",
		"name")
	// RehearsalLastRun is when the last rehearsal finished.
	RehearsalLastRun = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "rehearsal_last_run_timestamp_seconds",
		Help: "Unix time at which the last rehearsal of the seed finished."})
)

func init() {
	ctrlmetrics.Registry.MustRegister(RehearsalAdoptable, RehearsalCannotTell, RehearsalPlannedChanges, RehearsalLastRun, RehearsalRestorable)
}

// RehearsedObject is one object's outcome as the gauges show it.
type RehearsedObject struct {
	Kind, Name string
	// Adoptable is nil when the rehearsal cannot tell.
	Adoptable *bool
	// Changes counts the planned changes by action.
	Changes map[string]int
	// Restorable is a BackupEntry's restore drill's verdict (nil: not drilled, or nothing proven).
	Restorable *bool
}

// RecordRehearsal replaces every rehearsal series with objects' at unix time now.
func RecordRehearsal(objects []RehearsedObject, now float64) {
	RehearsalAdoptable.Reset()
	RehearsalCannotTell.Reset()
	RehearsalPlannedChanges.Reset()
	RehearsalRestorable.Reset()
	for _, o := range objects {
		if o.Restorable != nil {
			RehearsalRestorable.WithLabelValues(o.Name).Set(map[bool]float64{true: 1}[*o.Restorable])
		}
		switch {
		case o.Adoptable == nil:
			RehearsalCannotTell.WithLabelValues(o.Kind, o.Name).Set(1)
		case *o.Adoptable:
			RehearsalAdoptable.WithLabelValues(o.Kind, o.Name).Set(1)
		default:
			RehearsalAdoptable.WithLabelValues(o.Kind, o.Name).Set(0)
		}
		for change, n := range o.Changes {
			RehearsalPlannedChanges.WithLabelValues(o.Kind, o.Name, change).Set(float64(n))
		}
	}
	RehearsalLastRun.Set(now)
}
