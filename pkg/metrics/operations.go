// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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

// Outcomes of an actuator pass that are no failure; any other outcome is the failure's Gardener
// error code (or "error").
const (
	OutcomeSucceeded  = "succeeded"
	OutcomeInProgress = "in_progress" // a deletion that resumes
)

// CountOperation counts one actuator pass of kind and operation over the object name by its
// outcome, as lasterror.Label names it (the label is the caller's: this package knows no error
// codes), and keeps OperationFailingSince: set on a failure, kept through the failures after it,
// removed by a pass that succeeds or progresses.
func CountOperation(kind, operation, name, outcome string) {
	Reconciles.WithLabelValues(kind, operation, outcome).Inc()
	if outcome == OutcomeSucceeded || outcome == OutcomeInProgress {
		ForgetOperation(kind, name)
		return
	}
	failing.mu.Lock()
	defer failing.mu.Unlock()
	key := object{kind, name}
	since, ok := failing.since[key]
	if !ok {
		since = time.Now()
		failing.since[key] = since
	}
	// One series per object: the operation or the code may differ from the last failure's.
	OperationFailingSince.DeletePartialMatch(prometheus.Labels{"kind": kind, "name": name})
	OperationFailingSince.WithLabelValues(kind, name, operation, outcome).Set(float64(since.UnixNano()) / 1e9)
}

// ForgetOperation removes the OperationFailingSince series of an object of kind: its last pass
// did not fail, or it is gone (however it went).
func ForgetOperation(kind, name string) {
	failing.mu.Lock()
	defer failing.mu.Unlock()
	delete(failing.since, object{kind, name})
	OperationFailingSince.DeletePartialMatch(prometheus.Labels{"kind": kind, "name": name})
}

type object struct{ kind, name string }

// failing holds when each failing object's run of failed passes began, which a later failure
// with another code or operation keeps.
var failing = struct {
	mu    sync.Mutex
	since map[object]time.Time
}{since: map[object]time.Time{}}

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
