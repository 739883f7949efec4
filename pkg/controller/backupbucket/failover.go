// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"fmt"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/reconciled"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Event reasons of the automatic failover (copy.failover).
const (
	// ReasonFailoverRecorded (Warning): the BackupBucket recorded an automatic failover.
	ReasonFailoverRecorded = "FailoverRecorded"
	// ReasonFailoverAdopted (Normal): copy.serve: copy is set: the record ends, the
	// configuration serves the copy from now on.
	ReasonFailoverAdopted = "FailoverAdopted"
)

// failoverObserved is what decideFailover decides over.
type failoverObserved struct {
	// declared: a copy is declared; servesCopy: copy.serve is copy; after: copy.failover.after
	// (0: no policy).
	declared, servesCopy bool
	after                time.Duration
	// recorded is the BackupBucket's failover record (nil: none).
	recorded *connect.FailoverRecord
	// primary, copyAvailable and copyReady are BucketAvailable, CopyBucketAvailable and
	// CopyBucketReady as this look leaves them (nil: absent).
	primary, copyAvailable, copyReady *gardencorev1beta1.Condition
	copyBucket                        string
	now                               time.Time
}

// failoverAction is what a look does to the record.
type failoverAction int

const (
	failoverKeep failoverAction = iota
	failoverRecord
	failoverClear
)

// failoverPlan is the action, the record to write (failoverRecord) and the event's reason and
// message.
type failoverPlan struct {
	action          failoverAction
	record          *connect.FailoverRecord
	reason, message string
	// serving is the record the entries are served by after this look (nil: none, adopted, or
	// in conflict with the configuration): announceFailover asks the entries not on its copy
	// bucket yet to reconcile.
	serving *connect.FailoverRecord
}

// decideFailover is the pure decision of the automatic failover (table-tested). A record is
// never undone by the stores' state (no flapping): it ends only when the operator sets
// copy.serve: copy with the recorded copy bucket (adopting it; serve: primary is then the guarded
// way back). A configuration that no longer declares the recorded copy bucket (no copy, or
// another copy.bucketName: connect.FailoverConflict) keeps it: BackupsServedFrom and the
// BackupBucket's reconcile report the conflict (decideBucketServe), and no entry moves. Without a
// record, the failover is recorded once the primary's BucketAvailable has been False for at
// least after while CopyBucketAvailable and CopyBucketReady are True; an Unknown probe
// (throttled) is no proof of an outage.
func decideFailover(o failoverObserved) failoverPlan {
	isTrue := func(c *gardencorev1beta1.Condition) bool {
		return c != nil && c.Status == gardencorev1beta1.ConditionTrue
	}
	switch {
	case connect.FailoverConflict(o.recorded, o.declared, o.copyBucket) != nil:
		return failoverPlan{}
	case o.recorded != nil && o.servesCopy:
		return failoverPlan{action: failoverClear, reason: ReasonFailoverAdopted,
			message: fmt.Sprintf("copy.serve is copy: the operator adopted the automatic failover to %q (%s); copy.serve: primary is the way back.", o.recorded.CopyBucket, o.recorded.Describe())}
	case o.recorded != nil:
		return failoverPlan{serving: o.recorded}
	case !o.declared, o.servesCopy, o.after <= 0:
		return failoverPlan{}
	case o.primary == nil || o.primary.Status != gardencorev1beta1.ConditionFalse || o.now.Sub(o.primary.LastTransitionTime.Time) < o.after:
		return failoverPlan{}
	case !isTrue(o.copyAvailable) || !isTrue(o.copyReady):
		return failoverPlan{}
	}
	rec := &connect.FailoverRecord{At: metav1.NewTime(o.now), CopyBucket: o.copyBucket, Reason: o.primary.Reason, Message: o.primary.Message, Since: o.primary.LastTransitionTime}
	return failoverPlan{action: failoverRecord, record: rec, serving: rec, reason: ReasonFailoverRecorded,
		message: fmt.Sprintf("Every entry is served from the copy bucket %q from now on: %s. It is never undone automatically: set copy.serve: copy to adopt it, then copy.serve: primary to come back.", o.copyBucket, rec.Describe())}
}

// observeFailover is failoverObserved of bb as its conditions stand, with cfg (cfgErr: the
// configuration does not decode, or its record is unreadable: nothing is decided).
func observeFailover(bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, cfgErr error, now time.Time) (failoverObserved, bool) {
	if cfgErr != nil {
		return failoverObserved{}, false
	}
	rec, err := connect.FailoverRecordOf(bb)
	if err != nil {
		return failoverObserved{}, false
	}
	s := cfg.CopySettings()
	o := failoverObserved{declared: s != nil, servesCopy: s.ServesCopy(), recorded: rec, now: now,
		primary:       v1beta1helper.GetCondition(bb.Status.Conditions, ConditionBucketAvailable),
		copyAvailable: v1beta1helper.GetCondition(bb.Status.Conditions, ConditionCopyBucketAvailable),
		copyReady:     v1beta1helper.GetCondition(bb.Status.Conditions, ConditionCopyBucketReady)}
	if s != nil {
		o.after, o.copyBucket = s.Failover.AfterOrZero(), s.Bucket(bb.Name)
	}
	return o, true
}

// applyFailover writes plan's record into bb's providerStatus (in the probe's status patch) and
// reports whether it changed anything; an unreadable providerStatus is an error and nothing is
// written.
func applyFailover(bb *extensionsv1alpha1.BackupBucket, plan failoverPlan) (bool, error) {
	switch plan.action {
	case failoverRecord:
		return MergeProviderStatus(bb, func(ps *ProviderStatus) { ps.Failover = plan.record })
	case failoverClear:
		return MergeProviderStatus(bb, func(ps *ProviderStatus) { ps.Failover = nil })
	}
	return false, nil
}

// announceFailover emits plan's event and, while the entries are served by a recorded failover
// (plan.serving), asks for the reconciles that make it true, as gardenlet's operation annotation:
// the BackupBucket's (BackupsServedFrom CopyByPolicy; a failing primary no longer fails it)
// until its condition says CopyByPolicy, and each of its entries' whose etcd-backup does not
// name the record's copy bucket yet (entryinfo.EtcdBackupBucket). It does so on every look, not
// only the one that records: a failed List or patch is made good by the next look instead of
// leaving shoots on the dead primary. An entry with an operation annotation counts as asked;
// one that names the copy already is left alone. Adopting a record changes no serving, and a
// record in conflict with the configuration (connect.FailoverConflict) must move no entry:
// nothing is asked then.
func (p *prober) announceFailover(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, plan failoverPlan) error {
	if plan.action != failoverKeep {
		eventType := corev1.EventTypeWarning
		if plan.action == failoverClear && plan.reason == ReasonFailoverAdopted {
			eventType = corev1.EventTypeNormal
		}
		p.Recorder.Eventf(bb, nil, eventType, plan.reason, "Failover", "%s", extstatus.EventNote(plan.message))
		log.FromContext(ctx).Info("Automatic failover", "reason", plan.reason, "message", plan.message)
	}
	rec := plan.serving
	if rec == nil {
		return nil
	}
	if served := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionBackupsServedFrom); served == nil || served.Reason != connect.ServeReasonCopyByPolicy {
		if err := reconciled.RequestReconcile(ctx, p.Client, bb); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("asking for a reconcile of BackupBucket %s to serve the copy %q by policy: %w", bb.Name, rec.CopyBucket, err)
		}
	}
	list := &extensionsv1alpha1.BackupEntryList{}
	if err := p.Reader.List(ctx, list); err != nil {
		return fmt.Errorf("listing the BackupEntries of bucket %q to serve the copy %q by policy: %w", bb.Name, rec.CopyBucket, err)
	}
	for i := range list.Items {
		be := &list.Items[i]
		if be.Spec.BucketName != bb.Name || be.DeletionTimestamp != nil || be.Annotations[v1beta1constants.GardenerOperation] != "" {
			continue
		}
		named, err := entryinfo.EtcdBackupBucket(ctx, p.Reader, be)
		if err != nil {
			return fmt.Errorf("BackupEntry %s while serving the copy %q by policy: %w", be.Name, rec.CopyBucket, err)
		}
		if named == rec.CopyBucket {
			continue // switched already
		}
		if err := reconciled.RequestReconcile(ctx, p.Client, be); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("asking for a reconcile of BackupEntry %s to serve the copy %q by policy: %w", be.Name, rec.CopyBucket, err)
		}
	}
	return nil
}
