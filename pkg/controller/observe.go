package controller

import (
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
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

// Observe counts one actuator pass of kind and operation by its outcome and returns err as it
// is: succeeded, in_progress for a deletion that resumes, else the first Gardener error code of
// err (what status.lastError.codes shows) or "error".
func Observe(kind, operation string, err error) error {
	metrics.Reconciles.WithLabelValues(kind, operation, Result(err)).Inc()
	return err
}

// Result is how Observe labels err.
func Result(err error) string {
	if err == nil {
		return "succeeded"
	}
	cause := reconcilerutils.ReconcileErrCauseOrErr(err) // the reconcilers' requeue wrapper has no Unwrap
	if errors.As(cause, new(*InProgressError)) {
		return "in_progress"
	}
	if codes := v1beta1helper.ExtractErrorCodes(cause); len(codes) > 0 {
		return string(codes[0])
	}
	if codes := Codes(cause); len(codes) > 0 {
		return string(codes[0])
	}
	return "error"
}

// ObserveDeletionPass records one pass of the deletion engine over obj (a BackupBucket or a
// BackupEntry of kind): what it deleted, and, until ObserveDeletionDone, since when obj is being
// deleted and what is left of it (listed but not deleted, plus locked).
func ObserveDeletionPass(kind string, obj metav1.Object, res objectstore.DeleteResult) {
	metrics.DeletedObjects.WithLabelValues(kind).Add(float64(res.Deleted))
	started := time.Now()
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		started = ts.Time
	}
	metrics.DeletionStarted.WithLabelValues(kind, obj.GetName()).Set(float64(started.Unix()))
	metrics.DeletionRemaining.WithLabelValues(kind, obj.GetName()).Set(float64(res.Unsettled + res.Locked))
}

// ObserveDeferred counts locked object versions whose deletion the store took over (verified).
func ObserveDeferred(kind string, count int) {
	metrics.DeferredObjects.WithLabelValues(kind).Add(float64(count))
}

// ObserveDeletionDone drops the deletion gauges of a deletion that is done.
func ObserveDeletionDone(kind, name string) { metrics.ForgetDeletion(kind, name) }
