// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
)

// ConditionBackupsRestorable on a BackupEntry says whether the newest backup of every etcd under
// its prefix restored in the last restore drill.
const ConditionBackupsRestorable gardencorev1beta1.ConditionType = "BackupsRestorable"

// Reasons of BackupsRestorable besides the drill's findings (drill.Reason: HashMismatch,
// ChainBroken, Undecodable, RestoreFailed, NoFullSnapshot, KeyRefused, all False; TooLarge and
// CutOff, Unknown) and
// backupentry's ShootHibernated, ShootGone and Deleting (Unknown).
const (
	// ReasonRestored (True): every etcd restored.
	ReasonRestored = "Restored"
	// ReasonNotDrilledYet (Unknown): the entry's first drill is still to come.
	ReasonNotDrilledYet = "NotDrilledYet"
	// ReasonDrillFailed (Unknown): the store (throttled, unreachable, forbidden) or the drill's
	// own machinery (scratch disk, the restore process's start or confinement) failed: nothing
	// proven either way; retried within minutes.
	ReasonDrillFailed = "DrillFailed"
	// ReasonDrillInterrupted (Unknown): the drill's process, or its restore child, was killed
	// during the drill (out of memory, most likely): nothing proven, and the entry is drilled
	// again an interval later, after every entry due meanwhile, as after a cut-off.
	ReasonDrillInterrupted = "DrillInterrupted"
	// ReasonNoSnapshots (Unknown): nothing under the prefix to drill (BackupsFresh says whether
	// that is a problem).
	ReasonNoSnapshots = "NoSnapshots"
)

// Event reasons, emitted when BackupsRestorable changes.
const (
	EventRestorable           = "BackupsRestorable"
	EventNotRestorable        = "BackupsNotRestorable"
	EventRestorabilityUnknown = "BackupsRestorabilityUnknown"
)

// Verdict is BackupsRestorable's content.
type Verdict struct {
	Status  gardencorev1beta1.ConditionStatus `json:"status"`
	Reason  string                            `json:"reason,omitempty"`
	Message string                            `json:"message,omitempty"`
}

// etcdStatus is one etcd's drill as published.
func etcdStatus(res drill.Result) drill.EtcdStatus {
	e := drill.EtcdStatus{Name: res.Etcd, FullSnapshot: res.Full, Deltas: res.Deltas, Size: res.Size, BytesRead: res.BytesRead,
		Duration: metav1.Duration{Duration: res.Duration.Round(time.Millisecond)}}
	switch reason := drill.ReasonOf(res.Err); {
	case res.Err == nil:
		e.Restorable, e.Reason = string(gardencorev1beta1.ConditionTrue), ReasonRestored
		e.Revision, e.Keys = res.Revision, res.Keys
		e.Message = fmt.Sprintf("restored to revision %d (%d keys) from full snapshot %s and %d deltas, %d bytes read in %s",
			res.Revision, res.Keys, res.Full, res.Deltas, res.BytesRead, e.Duration.Duration)
	case reason == drill.ReasonTooLarge:
		e.Restorable, e.Reason = string(gardencorev1beta1.ConditionUnknown), string(reason)
		e.Message = fmt.Sprintf("not drilled, over the budget (chain of %d bytes, %d deltas): %v", res.Size, res.Deltas, res.Err)
	case reason == drill.ReasonCutOff:
		e.Restorable, e.Reason = string(gardencorev1beta1.ConditionUnknown), string(reason)
		e.Message = fmt.Sprintf("nothing proven, the drill was cut off after %d bytes read: %v; drilled again an interval later", res.BytesRead, res.Err)
	case reason != "":
		e.Restorable, e.Reason, e.Message = string(gardencorev1beta1.ConditionFalse), string(reason), res.Err.Error()
	case errors.Is(res.Err, drill.ErrRestoreKilled):
		e.Restorable, e.Reason = string(gardencorev1beta1.ConditionUnknown), ReasonDrillInterrupted
		e.Message = fmt.Sprintf("nothing proven, the drill was interrupted: %v; drilled again an interval later", res.Err)
	default:
		e.Restorable, e.Reason = string(gardencorev1beta1.ConditionUnknown), ReasonDrillFailed
		e.Message = fmt.Sprintf("nothing proven, the drill failed: %v", res.Err)
	}
	if res.Unconfined != "" {
		e.Message += fmt.Sprintf(" (the restore process ran without Landlock confinement: %s)", res.Unconfined)
	}
	return e
}

// verdictOf is BackupsRestorable for st: False when an etcd is not restorable, else Unknown when
// one is unknown, else True. last is the drill before (nil: none), which a failed one cites.
func verdictOf(st *drill.Status, last *drill.Status) Verdict {
	at := st.DrilledAt.UTC().Format(time.RFC3339)
	if st.Error != "" {
		v := Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonDrillFailed,
			Message: fmt.Sprintf("The restore drill at %s proved nothing: %s.", at, st.Error)}
		if last != nil && last.Error == "" && len(last.Etcds) > 0 {
			v.Message += " The drill before, at " + last.DrilledAt.UTC().Format(time.RFC3339) + ", found: " + etcdLines(last.Etcds)
		}
		return v
	}
	if st.Interrupted != "" {
		v := Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonDrillInterrupted,
			Message: fmt.Sprintf("The restore drill proved nothing: %s; drilled again an interval later.", st.Interrupted)}
		if last != nil && last.Error == "" && len(last.Etcds) > 0 {
			v.Message += " The drill before, at " + last.DrilledAt.UTC().Format(time.RFC3339) + ", found: " + etcdLines(last.Etcds)
		}
		return v
	}
	if len(st.Etcds) == 0 && st.CutOff != "" {
		v := Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: string(drill.ReasonCutOff),
			Message: fmt.Sprintf("The restore drill at %s was cut off before it drilled anything: %s; drilled again an interval later.", at, st.CutOff)}
		if last != nil && last.Error == "" && len(last.Etcds) > 0 {
			v.Message += " The drill before, at " + last.DrilledAt.UTC().Format(time.RFC3339) + ", found: " + etcdLines(last.Etcds)
		}
		return v
	}
	if len(st.Etcds) == 0 {
		return Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonNoSnapshots,
			Message: fmt.Sprintf("The restore drill at %s found no snapshot under the entry's prefix: nothing to restore.", at)}
	}
	v := Verdict{Status: gardencorev1beta1.ConditionTrue, Reason: ReasonRestored}
	for _, want := range []gardencorev1beta1.ConditionStatus{gardencorev1beta1.ConditionUnknown, gardencorev1beta1.ConditionFalse} {
		for _, e := range st.Etcds {
			if e.Restorable == string(want) {
				v.Status, v.Reason = want, e.Reason
				break
			}
		}
	}
	v.Message = fmt.Sprintf("Restore drill at %s: %s", at, etcdLines(st.Etcds))
	return v
}

func etcdLines(etcds []drill.EtcdStatus) string {
	lines := make([]string, 0, len(etcds))
	for _, e := range etcds {
		lines = append(lines, e.Name+": "+e.Message)
	}
	return strings.Join(lines, "; ") + "."
}

// publish writes st beside the inventory in status.providerStatus as s's drill and s's condition.
func (r *Reconciler) publish(ctx context.Context, be *extensionsv1alpha1.BackupEntry, s side, st *drill.Status, v Verdict) error {
	if s.store == metrics.StoreCopy { // beside BackupsRestorable, it names the bucket it speaks of
		v.Message = fmt.Sprintf("Copy bucket %s: %s", st.Bucket, v.Message)
	}
	if err := r.setCondition(ctx, be, s, v, st); err != nil {
		return fmt.Errorf("publishing the restore drill of BackupEntry %s: %w", be.Name, err)
	}
	return nil
}

// setCondition sets s's condition to v (and s's drill status when st is set), and emits an
// event when the verdict (status or reason) changes.
func (r *Reconciler) setCondition(ctx context.Context, be *extensionsv1alpha1.BackupEntry, s side, v Verdict, st *drill.Status) error {
	var previous *gardencorev1beta1.Condition
	err := extstatus.Patch(ctx, r.Client, r.Reader, be, func(be *extensionsv1alpha1.BackupEntry) bool {
		old := v1beta1helper.GetCondition(be.Status.Conditions, s.condition)
		if st == nil && old != nil && old.Status == v.Status && old.Reason == v.Reason && old.Message == v.Message {
			previous = old
			return false
		}
		if st != nil { // the drill's result ends its mark (markStarted)
			entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { *s.status(ps), *s.started(ps) = st, nil })
		}
		be.Status.Conditions, previous = extstatus.SetCondition(be.Status.Conditions, s.condition, v.Status, v.Reason, v.Message, r.Now())
		return true
	})
	if err != nil {
		return err
	}
	if previous == nil || previous.Status != v.Status || previous.Reason != v.Reason {
		eventType, reason := corev1.EventTypeNormal, s.unknown
		switch v.Status {
		case gardencorev1beta1.ConditionTrue:
			reason = s.restorable
		case gardencorev1beta1.ConditionFalse:
			eventType, reason = corev1.EventTypeWarning, s.notRestorable
		}
		r.Recorder.Eventf(be, nil, eventType, reason, "RestoreDrill", "%s", extstatus.EventNote(v.Message))
	}
	return nil
}

// observe sets the drill metrics of the entry's store (metrics.StorePrimary, metrics.StoreCopy)
// from st; last is the drill of that store before (nil: none). A drill that proved nothing for an
// etcd leaves its series as the last drill set them, so an alert on a backup found not restorable
// does not clear because the store fails now.
func observe(entry, store string, st *drill.Status, last *drill.Status) {
	if st.Error != "" || st.Interrupted != "" || (st.CutOff != "" && len(st.Etcds) == 0) {
		return
	}
	now := map[string]bool{}
	for _, e := range st.Etcds {
		now[e.Name] = true
	}
	if last != nil {
		for _, e := range last.Etcds {
			if !now[e.Name] { // gone from the listing
				forgetEtcd(entry, e.Name, store)
			}
		}
	}
	for _, e := range st.Etcds {
		metrics.DrillBytes.WithLabelValues(entry, e.Name, store).Set(float64(e.BytesRead))
		switch e.Restorable {
		case string(gardencorev1beta1.ConditionTrue):
			metrics.Restorable.WithLabelValues(entry, e.Name, store).Set(1)
			metrics.DrillRevision.WithLabelValues(entry, e.Name, store).Set(float64(e.Revision))
			metrics.DrillTime.WithLabelValues(entry, e.Name, store).Set(float64(st.DrilledAt.Unix()))
		case string(gardencorev1beta1.ConditionFalse):
			metrics.Restorable.WithLabelValues(entry, e.Name, store).Set(0)
			metrics.DrillRevision.DeleteLabelValues(entry, e.Name, store)
			metrics.DrillTime.WithLabelValues(entry, e.Name, store).Set(float64(st.DrilledAt.Unix()))
		default:
			if e.Reason == ReasonDrillFailed || e.Reason == ReasonDrillInterrupted || e.Reason == string(drill.ReasonCutOff) {
				continue // nothing proven: an alert on the last finding does not clear by it
			}
			metrics.Restorable.DeleteLabelValues(entry, e.Name, store)
			metrics.DrillRevision.DeleteLabelValues(entry, e.Name, store)
			metrics.DrillTime.DeleteLabelValues(entry, e.Name, store)
		}
	}
}

func forgetEtcd(entry, etcd, store string) {
	labels := prometheus.Labels{"entry": entry, "etcd": etcd, "store": store}
	for _, g := range []*prometheus.GaugeVec{metrics.Restorable, metrics.DrillTime, metrics.DrillRevision, metrics.DrillBytes} {
		g.Delete(labels)
	}
}
