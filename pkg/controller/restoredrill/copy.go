// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// The copy's drill: where the seed configuration declares a copy (connect.CopyPlaceOf), each
// entry's prefix in the copy bucket is drilled as its own bucket is, read with the copy's
// credentials, and reported in CopyRestorable with BackupsRestorable's reasons, in
// providerStatus.copyDrill (its mark: copyDrillStarted) and in the drill metrics with
// store="copy". It runs on the primary's interval, half an interval after it: both take the
// process's drill slots and scratch directory one at a time, so the caps hold and each interval
// reads every chain twice (once per store).

// ConditionCopyRestorable on a BackupEntry says whether the newest backup of every etcd under its
// prefix in the copy bucket restored in the copy's last restore drill. Its reasons are
// BackupsRestorable's, and ReasonCopyIsSource.
const ConditionCopyRestorable gardencorev1beta1.ConditionType = "CopyRestorable"

// ReasonCopyIsSource (False): copy.bucketName names the entry's own bucket: there is no second
// copy to drill.
const ReasonCopyIsSource = "CopyIsSource"

// Event reasons, emitted when CopyRestorable changes.
const (
	EventCopyRestorable           = "CopyRestorable"
	EventCopyNotRestorable        = "CopyNotRestorable"
	EventCopyRestorabilityUnknown = "CopyRestorabilityUnknown"
)

// seedConfigRetry is how soon an entry is looked at again while the seed configuration is not
// read yet (nothing about the copy is decided with the defaults).
const seedConfigRetry = time.Minute

// copyStep is what one look does about the copy's drill (decideCopy).
type copyStep int

const (
	// copyWithdraw: no copy declared; CopyRestorable, copyDrill, its mark and series go.
	copyWithdraw copyStep = iota
	// copyIsSource: the copy bucket is the entry's own: False CopyIsSource, nothing drilled.
	copyIsSource
	// copyInterrupted: a mark of a copy drill that never reported: Unknown DrillInterrupted.
	copyInterrupted
	// copyPending: never drilled; its first drill is at the time decideCopy returns.
	copyPending
	// copyWait: drilled next at the time decideCopy returns (zero: when the entry's first
	// successful reconcile wakes it).
	copyWait
	// copyDrillNow: drill the copy now.
	copyDrillNow
)

// copyState is what decideCopy decides on.
type copyState struct {
	// declared: the seed configuration declares a copy, in bucket and region.
	declared       bool
	bucket, region string
	// isSource: the copy bucket is the entry's own bucket (connect.CopyPlace.IsBucket: the same
	// name in a store of the primary's type; a store of another type holds another bucket).
	isSource bool
	// last is the copy's last drill (nil: none); started its mark (nil: none).
	last    *drill.Status
	started *metav1.Time
	// succeeded: the entry's last operation succeeded (an entry never reconciled is not drilled).
	succeeded bool
	// first is the copy's first slot; due is when a drill after last is due (Reconciler.due).
	first, due time.Time
	now        time.Time
}

// decideCopy is the copy drill's state machine for one look.
func decideCopy(s copyState) (copyStep, time.Time) {
	switch {
	case !s.declared:
		return copyWithdraw, time.Time{}
	case s.isSource:
		return copyIsSource, time.Time{}
	case s.started != nil:
		return copyInterrupted, time.Time{}
	case s.last != nil && (s.last.Bucket != s.bucket || s.last.Region != s.region):
		return copyDrillNow, time.Time{} // the copy moved: its last drill was of another bucket
	case s.last == nil && !s.succeeded:
		return copyWait, time.Time{}
	case s.last == nil && s.now.Before(s.first):
		return copyPending, s.first
	case s.last != nil && s.now.Before(s.due):
		return copyWait, s.due
	}
	return copyDrillNow, time.Time{}
}

// copyFirstSlot is the copy's first drill: half an interval after the primary's, so that the two
// drills of an entry alternate.
func (r *Reconciler) copyFirstSlot(be *extensionsv1alpha1.BackupEntry) time.Time {
	anchor := be.CreationTimestamp.Time
	if r.Started.After(anchor) {
		anchor = r.Started
	}
	return periodic.FirstSlot(be, r.Options.Interval, anchor).Add(r.Options.Interval / 2)
}

// lookCopy drills the entry's copy when its drill is due (decideCopy) and removes what an earlier
// copy drill published when no copy is declared any more.
func (r *Reconciler) lookCopy(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (reconcile.Result, error) {
	cfg, err := connect.EntryConfig(r.Provider, be)
	if pending := (*provider.SeedConfigPendingError)(nil); errors.As(err, &pending) {
		return reconcile.Result{RequeueAfter: seedConfigRetry}, nil
	}
	// An invalid entry config is the bucket's controller's to report; the seed configuration's
	// copy applies meanwhile (Decode's fallback).
	place, err := connect.CopyPlaceOf(r.Provider, cfg, be.Spec.BucketName)
	if err != nil {
		// The copy cannot be looked at (copy.type this binary writes no copy of, its
		// providerConfig refused): nothing about it is proven; said, and looked at again an
		// interval later (the configuration's change wakes the entry earlier).
		metrics.ForgetCopyDrills(be.Name)
		return reconcile.Result{RequeueAfter: periodic.Jitter(r.Options.Interval)}, r.setCondition(ctx, be, copySide, Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonDrillFailed,
			Message: fmt.Sprintf("The copy is not drilled: %v.", err)}, nil)
	}
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil {
		ps = entryinfo.ProviderStatus{}
	}
	now := r.Now()
	s := copyState{last: ps.CopyDrill, started: ps.CopyDrillStarted,
		succeeded: extstatus.Succeeded(be), first: r.copyFirstSlot(be), now: now}
	if place != nil {
		s.declared, s.bucket, s.region, s.isSource = true, place.Bucket, place.Region, place.IsBucket(be.Spec.BucketName)
	}
	if s.last != nil {
		s.due = r.due(s.last)
	}
	step, at := decideCopy(s)
	switch step {
	case copyWithdraw:
		metrics.ForgetCopyDrills(be.Name)
		return reconcile.Result{}, r.withdrawCopy(ctx, be)
	case copyIsSource:
		metrics.ForgetCopyDrills(be.Name)
		if err := r.withdrawCopy(ctx, be); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, r.setCondition(ctx, be, copySide, Verdict{Status: gardencorev1beta1.ConditionFalse, Reason: ReasonCopyIsSource,
			Message: fmt.Sprintf("copy.bucketName names the entry's own bucket %s: there is no second copy to drill; set another bucket.", s.bucket)}, nil)
	case copyInterrupted:
		return r.reportInterrupted(ctx, be, r.copyOf(place), s.last, s.started.Time, now)
	case copyPending:
		return reconcile.Result{RequeueAfter: at.Sub(now)}, r.publishPending(ctx, be, copySide, at)
	case copyWait:
		if at.IsZero() {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{RequeueAfter: at.Sub(now)}, nil
	}
	st, _, err := r.driller().drillAt(ctx, be, r.copyOf(place), entryStatus{r, copySide}, s.last, nil)
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: periodic.Jitter(max(r.due(st).Sub(now), time.Second))}, nil
}

// copyOf is the copy bucket at place, read with the copy's credentials.
func (r *Reconciler) copyOf(place *connect.CopyPlace) where {
	return where{side: copySide, bucket: place.Bucket, region: place.Region,
		source: func(ctx context.Context) (drill.Source, error) { return place.NewDataPlane(ctx, r.Reader, r.Provider) }}
}

// withdrawCopy removes CopyRestorable, the copy's drill status and its mark from the entry.
func (r *Reconciler) withdrawCopy(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	err := extstatus.Patch(ctx, r.Client, r.Reader, be, func(be *extensionsv1alpha1.BackupEntry) bool {
		changed := false
		if v1beta1helper.GetCondition(be.Status.Conditions, ConditionCopyRestorable) != nil {
			be.Status.Conditions = v1beta1helper.RemoveConditions(be.Status.Conditions, ConditionCopyRestorable)
			changed = true
		}
		if ps, err := entryinfo.ReadProviderStatus(be); err == nil && (ps.CopyDrill != nil || ps.CopyDrillStarted != nil) {
			entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { ps.CopyDrill, ps.CopyDrillStarted = nil, nil })
			changed = true
		}
		return changed
	})
	if err != nil {
		return fmt.Errorf("removing the copy's restore drill from BackupEntry %s: %w", be.Name, err)
	}
	return nil
}
