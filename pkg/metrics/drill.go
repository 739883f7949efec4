// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of the restore drills (pkg/controller/restoredrill), one series per entry, etcd and
// store drilled (label store: StorePrimary, the entry's bucket; StoreCopy, the copy bucket the
// seed configuration declares), removed with the entry or when drills are switched off; a
// copy's series also when the copy is no longer declared.
var (
	// Restorable mirrors each etcd's part of the BackupsRestorable condition: 1 restored, 0 a
	// finding; absent while nothing is known (never drilled, over the budget). A drill that
	// fails for the store's sake keeps what the last drill found.
	Restorable = newGauge("entry_restorable",
		"1 when the last restore drill of a BackupEntry's etcd (etcd-main, etcd-events) restored its newest backup, 0 when it found it not restorable (BackupsRestorable); absent while unknown.",
		"entry", "etcd", "store")

	// DrillTime is when an etcd's last drill that proved anything (restored or a finding) ended.
	DrillTime = newGauge("entry_drill_timestamp_seconds",
		"Time (Unix seconds) of the last restore drill of a BackupEntry's etcd that proved it restorable or not.",
		"entry", "etcd", "store")

	// DrillRevision is the revision an etcd's last successful drill restored to.
	DrillRevision = newGauge("entry_drill_revision",
		"etcd revision the last successful restore drill of a BackupEntry's etcd restored to.",
		"entry", "etcd", "store")

	// DrillBytes is what an etcd's last drill read from the store.
	DrillBytes = newGauge("entry_drill_bytes_read",
		"Bytes the last restore drill of a BackupEntry's etcd read from the store.",
		"entry", "etcd", "store")

	// DrillDuration is how long one etcd's drill took, by result: restored, not_restorable,
	// unknown.
	DrillDuration = newHistogram("entry_drill_duration_seconds",
		"Duration of one etcd's restore drill (download, verification, restore) by result (restored, not_restorable, unknown).",
		[]float64{1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}, "result", "store")

	// DrillBytesTotal counts the bytes all drills read from the store.
	DrillBytesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "entry_drill_bytes_read_total",
		Help: "Bytes read from the store by restore drills, by store drilled (primary, copy).",
	}, []string{"store"})
)

// Label values of DrillDuration's result.
const (
	DrillRestored      = "restored"
	DrillNotRestorable = "not_restorable"
	DrillUnknown       = "unknown"
)

// Label values of the drill metrics' store.
const (
	// StorePrimary is the entry's own bucket (its spec), which etcd-backup-restore writes.
	StorePrimary = "primary"
	// StoreCopy is the copy bucket the seed configuration's copy declares.
	StoreCopy = "copy"
)

func init() {
	ctrlmetrics.Registry.MustRegister(Restorable, DrillTime, DrillRevision, DrillBytes, DrillDuration, DrillBytesTotal)
}

// ForgetDrills removes every drill series of one BackupEntry (it is gone, being deleted, or
// drills are off).
func ForgetDrills(entry string) {
	for _, g := range []*prometheus.GaugeVec{Restorable, DrillTime, DrillRevision, DrillBytes} {
		g.DeletePartialMatch(prometheus.Labels{"entry": entry})
	}
}

// ForgetCopyDrills removes the drill series of one BackupEntry's copy (the copy is no longer
// declared); the primary's stay.
func ForgetCopyDrills(entry string) {
	for _, g := range []*prometheus.GaugeVec{Restorable, DrillTime, DrillRevision, DrillBytes} {
		g.DeletePartialMatch(prometheus.Labels{"entry": entry, "store": StoreCopy})
	}
}
