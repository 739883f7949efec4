// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of the entry copy (pkg/controller/entrycopy), one series per entry, removed with the
// entry or when the copy is switched off.
var (
	// EntryCopyLag is the age of the oldest snapshot of an entry the copy lacks after the last
	// complete pass (0: caught up); absent while unknown (the copy store cannot be read).
	EntryCopyLag = newGauge("entry_copy_lag_seconds",
		"Age of the oldest snapshot of a BackupEntry that its copy bucket lacks (not copied, or held differently), after the last pass that listed both stores; 0 when caught up; absent while unknown.",
		"entry", "bucket", "copy_bucket")

	// EntryCopyRPO is the lag an entry's BackupsCopied tolerates (copy.rpo), beside the lag for
	// the alert BackupCopyLagging.
	EntryCopyRPO = newGauge("entry_copy_rpo_seconds",
		"The lag a BackupEntry's copy may have before BackupsCopied turns False (copy.rpo of the seed configuration).",
		"entry")

	// EntryCopyBytes counts the bytes copied into an entry's copy bucket.
	EntryCopyBytes = newCounter("entry_copy_bytes_total",
		"Bytes of snapshots copied into a BackupEntry's copy bucket.", "entry")

	// EntryCopyObjects counts the snapshots copied into an entry's copy bucket.
	EntryCopyObjects = newCounter("entry_copy_objects_total",
		"Snapshots copied into a BackupEntry's copy bucket.", "entry")

	// EntryCopyFailures counts failed copy passes by the Gardener error code of their first
	// failure ("" where it has none).
	EntryCopyFailures = newCounter("entry_copy_failures_total",
		"Copy passes of a BackupEntry that failed (a listing, or a snapshot not copied), by the Gardener error code of the failure.",
		"entry", "code")
)

func init() {
	ctrlmetrics.Registry.MustRegister(EntryCopyLag, EntryCopyRPO, EntryCopyBytes, EntryCopyObjects, EntryCopyFailures)
}

// ForgetEntryCopy removes an entry's copy series.
func ForgetEntryCopy(name string) {
	EntryCopyLag.DeletePartialMatch(prometheus.Labels{"entry": name})
	EntryCopyRPO.DeleteLabelValues(name)
	EntryCopyBytes.DeleteLabelValues(name)
	EntryCopyObjects.DeleteLabelValues(name)
	EntryCopyFailures.DeletePartialMatch(prometheus.Labels{"entry": name})
}
