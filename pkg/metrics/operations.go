// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Kinds and operations as the reconcile metrics label them.
const (
	KindBackupBucket = "BackupBucket"
	KindBackupEntry  = "BackupEntry"

	OperationReconcile = "reconcile"
	OperationDelete    = "delete"
	OperationMigrate   = "migrate"
	OperationRestore   = "restore"
)

// CountOperation counts one actuator pass of kind and operation by its outcome, as
// lasterror.Label names it (the label is the caller's: this package knows no error codes).
func CountOperation(kind, operation, outcome string) {
	Reconciles.WithLabelValues(kind, operation, outcome).Inc()
}

// RecordDeletionPass records one pass of the deletion engine over obj (a BackupBucket or a
// BackupEntry of kind): what it deleted, and, until DeletionDone, since when obj is being
// deleted and what is left of it (listed but not deleted, plus locked).
func RecordDeletionPass(kind string, obj metav1.Object, res objectstore.DeleteResult) {
	DeletedObjects.WithLabelValues(kind).Add(float64(res.Deleted))
	started := time.Now()
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		started = ts.Time
	}
	DeletionStarted.WithLabelValues(kind, obj.GetName()).Set(float64(started.Unix()))
	DeletionRemaining.WithLabelValues(kind, obj.GetName()).Set(float64(res.Unsettled + res.Locked))
}

// CountDeferred counts locked object versions whose deletion the store took over (verified).
func CountDeferred(kind string, count int) {
	DeferredObjects.WithLabelValues(kind).Add(float64(count))
}

// DeletionDone drops the deletion gauges of a deletion that is done.
func DeletionDone(kind, name string) { ForgetDeletion(kind, name) }
