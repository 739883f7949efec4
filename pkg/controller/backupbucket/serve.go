// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// ConditionBackupsServedFrom on a BackupBucket says which bucket its entries' etcd-backup
// secrets name (copy.serve): True Primary, True Copy, or True CopyByPolicy while an automatic
// failover is recorded (copy.failover; failover.go); False CopyNotReady while the copy is to be
// served and the copy bucket is not converged; False FailoverConflict while a recorded failover's
// copy bucket is no longer declared (connect.FailoverConflict). Absent when no copy is declared
// and no failover is recorded.
const ConditionBackupsServedFrom gardencorev1beta1.ConditionType = "BackupsServedFrom"

// Reasons of BackupsServedFrom (besides connect.ServeReasonPrimary and connect.ServeReasonCopy).
const (
	ReasonCopyNotReady = "CopyNotReady"
	// ReasonFailoverConflict: a failover is recorded but the configuration no longer declares
	// its copy bucket: the reconcile fails with the configuration error and no entry moves.
	ReasonFailoverConflict = "FailoverConflict"
	// ReasonPrimaryNotConverged is the Warning event of a primary bucket that cannot be
	// converged while the copy is served: the reconcile succeeds nevertheless.
	ReasonPrimaryNotConverged = "PrimaryNotConverged"
)

// serveObserved is what decideBucketServe decides over.
type serveObserved struct {
	// declared: a copy is declared; servesCopy: copy.serve is copy.
	declared, servesCopy bool
	// copyReady: CopyBucketReady is True (the copy bucket is converged and not the primary).
	copyReady        bool
	bucket, copyName string
	// primaryErr is the primary bucket's convergence error (nil: converged).
	primaryErr error
	// failover is the record of an automatic failover (copy.failover; nil: none): the copy is
	// served as with copy.serve: copy.
	failover *connect.FailoverRecord
}

// servePlan is BackupsServedFrom (nil: removed) and the reconcile's error about the primary.
type servePlan struct {
	cond *gardencorev1beta1.Condition
	// err is the primary's error this reconcile returns: none while the copy is served and
	// ready (gardenlet reconciles no BackupEntry of a failed BackupBucket, so a shoot would never
	// reach its Etcd with the copy's bucket).
	err error
}

// decideBucketServe is the pure decision of BackupsServedFrom and whether the primary's failure
// fails the reconcile.
func decideBucketServe(o serveObserved) servePlan {
	if conflict := connect.FailoverConflict(o.failover, o.declared, o.copyName); conflict != nil {
		// Failing the reconcile also keeps gardenlet from reconciling the bucket's entries: their
		// etcd-backup stay on the recorded copy.
		return servePlan{err: conflict, cond: &gardencorev1beta1.Condition{Status: gardencorev1beta1.ConditionFalse, Reason: ReasonFailoverConflict, Message: conflict.Error()}}
	}
	switch {
	case !o.declared:
		return servePlan{err: o.primaryErr}
	case !o.servesCopy && o.failover == nil:
		return servePlan{err: o.primaryErr, cond: &gardencorev1beta1.Condition{Status: gardencorev1beta1.ConditionTrue, Reason: connect.ServeReasonPrimary,
			Message: fmt.Sprintf("Backups are served from bucket %q (copy.serve is primary); bucket %q is their copy. An entry whose etcd-backup names the copy bucket (after serving it) keeps naming it until the snapshots its shoot wrote there are copied back (the entry's BackupsCopied: %s).", o.bucket, o.copyName, connect.ReasonCopyingBack)}}
	case !o.copyReady:
		return servePlan{err: o.primaryErr, cond: &gardencorev1beta1.Condition{Status: gardencorev1beta1.ConditionFalse, Reason: ReasonCopyNotReady,
			Message: fmt.Sprintf("copy.serve is copy, but the copy bucket %q is not converged (see CopyBucketReady): entries' etcd-backup name it only once their reconcile reaches it with the copy's credentials.", o.copyName)}}
	}
	why, reason := "copy.serve is copy", connect.ServeReasonCopy
	if !o.servesCopy {
		why, reason = o.failover.Describe()+"; set copy.serve: copy to adopt it", connect.ServeReasonCopyByPolicy
	}
	msg := fmt.Sprintf("Backups are served from the copy bucket %q (%s): entries' etcd-backup name it, and each shoot's Etcd takes it at the shoot's next reconcile. Nothing is copied from bucket %q any more; its objects stay, the operator's to delete.", o.copyName, why, o.bucket)
	if o.primaryErr != nil {
		msg += fmt.Sprintf(" Bucket %q is not converged: %v", o.bucket, o.primaryErr)
	}
	return servePlan{cond: &gardencorev1beta1.Condition{Status: gardencorev1beta1.ConditionTrue, Reason: reason, Message: msg}}
}

// servesCopy is true when cfg declares copy.serve: copy.
func servesCopy(cfg provider.Config) bool { return cfg.CopySettings().ServesCopy() }

// reconcileServe sets BackupsServedFrom after reconcileCopy (which set CopyBucketReady) and
// returns the primary's error this reconcile must return, and a failed status write.
func (a *actuator) reconcileServe(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, primaryErr error) (error, error) {
	s := cfg.CopySettings()
	o := serveObserved{declared: s != nil, servesCopy: s.ServesCopy(), bucket: bb.Name, primaryErr: primaryErr}
	if s != nil {
		o.copyName = s.Bucket(bb.Name)
		ready := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionCopyBucketReady)
		o.copyReady = ready != nil && ready.Status == gardencorev1beta1.ConditionTrue
	}
	rec, err := connect.FailoverRecordOf(bb)
	if err != nil {
		return primaryErr, err
	}
	o.failover = rec
	plan := decideBucketServe(o)
	if (o.servesCopy || o.failover != nil) && primaryErr != nil && plan.err == nil {
		log.Info("Primary bucket is not converged; the copy is served", "bucket", bb.Name, "error", primaryErr.Error())
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonPrimaryNotConverged, "Serve", "%s", extstatus.EventNote(plan.cond.Message))
	}
	var previous *gardencorev1beta1.Condition
	err = extstatus.Patch(ctx, a.client, a.reader, bb, func(bb *extensionsv1alpha1.BackupBucket) bool {
		old := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionBackupsServedFrom)
		if plan.cond == nil {
			if old == nil {
				return false
			}
			bb.Status.Conditions = v1beta1helper.RemoveConditions(bb.Status.Conditions, ConditionBackupsServedFrom)
			return true
		}
		if old != nil && old.Status == plan.cond.Status && old.Reason == plan.cond.Reason && old.Message == plan.cond.Message {
			return false
		}
		bb.Status.Conditions, previous = extstatus.SetCondition(bb.Status.Conditions, ConditionBackupsServedFrom, plan.cond.Status, plan.cond.Reason, plan.cond.Message, time.Now())
		return true
	})
	if err != nil {
		return plan.err, fmt.Errorf("setting the %s condition: %w", ConditionBackupsServedFrom, err)
	}
	if plan.cond != nil && (previous == nil || previous.Reason != plan.cond.Reason) {
		eventType := corev1.EventTypeNormal
		if plan.cond.Status != gardencorev1beta1.ConditionTrue {
			eventType = corev1.EventTypeWarning
		}
		a.recorder.Eventf(bb, nil, eventType, plan.cond.Reason, "Serve", "%s", extstatus.EventNote(plan.cond.Message))
	}
	return plan.err, nil
}
