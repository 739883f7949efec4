// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package entrycopy is the periodic controller that copies each BackupEntry's snapshots from its
// bucket to the copy bucket its seed configuration declares (`copy:`, same store type), with
// replication.Copy, and reports the copy's lag: condition BackupsCopied, the metric
// gardener_backup_entry_copy_lag_seconds. It never deletes: an entry's deletion empties its
// prefix in the copy (the BackupEntry's delegate), and the copy bucket is the BackupBucket's.
package entrycopy

import (
	"context"
	"errors"
	"fmt"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/etcdwatch"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// unavailableRetry is how soon an entry is copied again after a pass that could not list a store.
const unavailableRetry = time.Minute

// copier copies each entry on an interval. It holds nothing of one request.
type copier struct {
	periodic.Deps

	opts Options
	// overtime caps the passes past their deadline at once (overtimeSlots; nil: no cap).
	overtime overtimeSlots
}

// Controller is the entry copy of p's entries as a periodic controller. With its interval 0
// (switched off) its one look at each entry removes what an earlier run published there.
func Controller(opts Options) periodic.Controller {
	return periodic.Controller{Name: "backupentry-copy", Recorder: "backupentry", For: &extensionsv1alpha1.BackupEntry{},
		Workers: opts.Workers,
		New: func(d periodic.Deps) reconcile.Reconciler {
			return &copier{Deps: d, opts: opts, overtime: newOvertimeSlots(opts.Workers)}
		},
		Watches: watchEtcds}
}

// watchEtcds wakes an entry's look when gardenlet rolls its shoot's Etcd onto another bucket
// (etcdwatch.Events; an Etcd seen at the start wakes nothing: the entries' own creation events
// do): rolled onto the entry's bucket, the final reverse pass (wayFinal) brings at once what the
// shoot wrote into the copy since the last reverse pass; rolled onto the copy, the look pauses
// (servingFromCopy) if etcd-backup holds the copy's credentials already, else the entry's
// reconcile that gives them wakes it again (its last operation). A look before its schedule with
// nothing changed makes no pass: the forward pass waits for its due time.
func watchEtcds(mgr manager.Manager, typeAndClass []predicate.Predicate) ([]periodic.Watch, error) {
	if err := etcdwatch.IndexEntries(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	return []periodic.Watch{{Object: &druidcorev1alpha1.Etcd{}, Handler: etcdwatch.Events(mgr.GetClient(), typeAndClass, nil)}}, nil
}

// lifecycle: BackupsCopied and the copy's series. A migration's source entry shares its prefix
// with the entry it is restored into, which is copied.
var lifecycle = periodic.Lifecycle[*extensionsv1alpha1.BackupEntry]{
	Conditions: []gardencorev1beta1.ConditionType{ConditionBackupsCopied},
	Deleting: func(*extensionsv1alpha1.BackupEntry) string {
		return "The entry is being deleted: its snapshots are no longer copied; its prefix in the copy bucket is deleted with the entry's."
	},
	Forget: metrics.ForgetEntryCopy,
	Skip:   entryinfo.IsSourceEntry,
}

// Reconcile implements reconcile.Reconciler.
func (c *copier) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return periodic.Reconcile(ctx, c.Deps, req, &extensionsv1alpha1.BackupEntry{}, c.opts.Interval, lifecycle, c.look)
}

// look copies a live entry when its pass is due.
func (c *copier) look(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (reconcile.Result, error) {
	cfg, err := connect.EntryConfig(c.Provider, be)
	if pending := (*provider.SeedConfigPendingError)(nil); errors.As(err, &pending) {
		return reconcile.Result{RequeueAfter: unavailableRetry}, nil // nothing is done with the defaults
	}
	// An invalid entry config is the bucket's controller's to report; the seed configuration's
	// copy applies meanwhile (Decode's fallback).
	place, err := connect.CopyPlaceOf(c.Provider, cfg, be.Spec.BucketName)
	if err != nil {
		// A copy.type this binary writes no copy of (provider.CopyStore): the copy cannot be read.
		s := cfg.CopySettings()
		v := decide(outcome{copyErr: err}, s.RPOOrDefault(), be.Spec.BucketName, s.Bucket(be.Spec.BucketName), c.Now())
		return reconcile.Result{RequeueAfter: unavailableRetry}, c.publish(ctx, be, &v)
	}
	if place == nil {
		// No copy declared (any more): nothing to judge. The copy bucket and what it holds stay.
		metrics.ForgetEntryCopy(be.Name)
		return reconcile.Result{}, c.publish(ctx, be, nil)
	}
	// copy.serve primary while the shoot still writes the copy: copied back first.
	res, done, caughtUp, err := c.copyBack(ctx, be, place)
	if done || err != nil {
		return res, err
	}
	serving, pending, err := c.servingFromCopy(ctx, be, place)
	if serving || err != nil {
		// Looked at again on the interval: copy.serve may be primary again.
		return reconcile.Result{RequeueAfter: periodic.Jitter(place.Settings.IntervalOr(c.opts.Interval))}, err
	}
	cond := v1beta1helper.GetCondition(be.Status.Conditions, ConditionBackupsCopied)
	if cond == nil && !extstatus.Succeeded(be) {
		return reconcile.Result{}, nil // its first successful reconcile wakes us
	}
	interval := place.Settings.IntervalOr(c.opts.Interval)
	now := c.Now()
	switch {
	case caughtUp.due:
		// The catch-up after the flip-back left nothing missing: the forward pass is due now.
	case cond == nil:
		anchor := be.CreationTimestamp.Time
		if c.Started.After(anchor) {
			anchor = c.Started
		}
		if first := periodic.FirstSlot(be, interval, anchor); now.Before(first) {
			return reconcile.Result{RequeueAfter: first.Sub(now)}, nil
		}
	default:
		if due := cond.LastUpdateTime.Add(interval); now.Before(due) && cond.Reason != ReasonCopyUnavailable && cond.Reason != ReasonSourceUnavailable {
			return reconcile.Result{RequeueAfter: due.Sub(now)}, nil
		}
	}

	o := c.pass(ctx, be, place)
	if refusedAsDeleted(o) {
		// The entry is being deleted or gone (entryLive): nothing is published on it; its
		// deletion (or a new entry of its name) is reconciled on its own event.
		log.FromContext(ctx).Info("Copy pass refused a snapshot's commit: the BackupEntry is being deleted or gone; nothing is published")
		return reconcile.Result{}, nil
	}
	v := decide(o, place.Settings.RPOOrDefault(), be.Spec.BucketName, place.Bucket, c.Now())
	v.message += pending       // copy.serve is copy, but etcd-backup is not switched yet
	v.message += caughtUp.note // the final reverse pass's snapshots of the copy left out
	observe(be, place.Bucket, o, v)
	metrics.EntryCopyRPO.WithLabelValues(be.Name).Set(place.Settings.RPOOrDefault().Seconds())
	if err := c.publish(ctx, be, &v); err != nil {
		return reconcile.Result{}, err
	}
	if r := o.result; r.Copied > 0 {
		log.FromContext(ctx).Info("Copy pass copied snapshots", "mode", copyMode(r), "serverSide", r.ServerSide, "streamed", r.Streamed,
			"bytes", r.Bytes, "serverSideRefused", errString(r.ServerSideRefused), "copyBucket", place.Bucket)
	}
	if o.result.Unguarded > 0 {
		log.FromContext(ctx).Info("Copy pass wrote objects the copy store could not guard: an object written there meanwhile may have been replaced",
			"unguarded", o.result.Unguarded, "copyBucket", place.Bucket)
	}
	if v.status == gardencorev1beta1.ConditionUnknown {
		log.FromContext(ctx).Info("Copy pass could not list both stores, retrying in a minute", "reason", v.reason, "message", v.message)
		return reconcile.Result{RequeueAfter: unavailableRetry}, nil
	}
	return reconcile.Result{RequeueAfter: periodic.Jitter(interval)}, nil
}

// pass copies the entry's prefix (Locate) from its bucket, read with its own credentials, to the
// copy bucket, written with the copy's, its snapshots started within passDeadline (passOptions). Both data planes go to the engine as
// they are, so that it finds what they offer beyond the interfaces (objectstore.ConditionalWriter,
// objectstore.StreamBuffer); which store failed to be read its *replication.SideError tells. A
// copy bucket that is the entry's own is not copied onto itself.
func (c *copier) pass(ctx context.Context, be *extensionsv1alpha1.BackupEntry, place *connect.CopyPlace) outcome {
	return c.passWay(ctx, be, place, wayForward)
}

// passWay is pass (wayForward), or another way its reverse (copyBack, passBack): from the copy
// bucket, read with the copy's credentials, into the entry's bucket, written with its own,
// streamed. Either way outcome.copyErr is the copy store's failure and outcome.sourceErr the
// entry's bucket's.
func (c *copier) passWay(ctx context.Context, be *extensionsv1alpha1.BackupEntry, place *connect.CopyPlace, w way) outcome {
	if place.IsBucket(be.Spec.BucketName) {
		return outcome{copyIsSource: true}
	}
	loc, err := entryinfo.LocateEntry(ctx, c.Reader, be)
	if err != nil {
		return outcome{sourceErr: err}
	}
	src, err := connect.NewDataPlane(ctx, c.Reader, c.Provider, be.Spec.SecretRef, be.Spec.Region)
	if err != nil {
		return outcome{sourceErr: err}
	}
	data, err := place.NewDataPlane(ctx, c.Reader, c.Provider)
	if err != nil {
		return outcome{copyErr: err}
	}
	if w != wayForward {
		return c.passBack(ctx, be, place, src, data, loc.Prefix, w)
	}
	dst, ok := data.(replication.Destination)
	if !ok {
		return outcome{copyErr: fmt.Errorf("the %s store writes no streams yet (objectstore.StreamWriter): %w", place.Provider.Type(), objectstore.ErrUnsupported)}
	}
	ctx = objectstore.WithOperation(ctx, "copy")
	to := replication.To{Store: dst, Bucket: place.Bucket}
	// Server-side where the copy's store can: the engine tries it on the pass's first object
	// (the copy's credentials reading the entry's bucket, which the operator grants) and streams
	// where the store refuses. Only within one store type: a store of another type cannot read
	// the entry's bucket (and would look up its name in its own namespace).
	if copier, ok := data.(objectstore.ServerSideCopier); ok && place.Provider.Type() == c.Provider.Type() {
		to.Copier = copier
	}
	res, err := replication.Copy(ctx,
		replication.From{Store: src, Bucket: be.Spec.BucketName},
		to, loc.Prefix, c.passOptions(ctx, be))
	return outcomeOf(res, err, replication.SideDestination) // the copy bucket is written
}

// outcomeOf sorts a pass's error by store: copySide is the engine's side the copy bucket is on
// (the destination forward, the source when copying back); the other side is the entry's bucket.
// An error of neither side and no object's failure (the prefix refused) is the entry bucket's:
// nothing is known of the copy.
func outcomeOf(res replication.Result, err error, copySide replication.Side) outcome {
	var side *replication.SideError
	switch {
	case errors.As(err, &side) && side.Side == copySide:
		return outcome{copyErr: side.Err}
	case errors.As(err, &side):
		return outcome{sourceErr: side.Err}
	case err != nil && len(res.Failed) == 0:
		return outcome{sourceErr: err}
	}
	return outcome{result: res, copyFailed: err}
}

// publish sets BackupsCopied to v (nil: removes it) and emits an event when its status changes.
func (c *copier) publish(ctx context.Context, be *extensionsv1alpha1.BackupEntry, v *verdict) error {
	var previous *gardencorev1beta1.Condition
	changed := false
	err := extstatus.Patch(ctx, c.Client, c.Reader, be, func(be *extensionsv1alpha1.BackupEntry) bool {
		old := v1beta1helper.GetCondition(be.Status.Conditions, ConditionBackupsCopied)
		if v == nil {
			if old == nil {
				return false
			}
			be.Status.Conditions = v1beta1helper.RemoveConditions(be.Status.Conditions, ConditionBackupsCopied)
			return true
		}
		// Written on every pass: its LastUpdateTime is when the last pass ended.
		be.Status.Conditions, previous = extstatus.SetCondition(be.Status.Conditions, ConditionBackupsCopied, v.status, v.reason, v.message, c.Now())
		changed = previous == nil || previous.Status != v.status || previous.Reason != v.reason
		return true
	})
	if err != nil {
		return fmt.Errorf("setting the %s condition of BackupEntry %s: %w", ConditionBackupsCopied, be.Name, err)
	}
	if v != nil && changed {
		eventType := corev1.EventTypeNormal
		if v.status != gardencorev1beta1.ConditionTrue {
			eventType = corev1.EventTypeWarning
		}
		c.Recorder.Eventf(be, nil, eventType, v.reason, "Copy", "%s", extstatus.EventNote(v.message))
	}
	return nil
}

// observe sets the copy's metrics of one pass: the lag where it is known (absent otherwise),
// what was copied, and a failure by its Gardener error code.
func observe(be *extensionsv1alpha1.BackupEntry, copyBucket string, o outcome, v verdict) {
	metrics.EntryCopyLag.DeletePartialMatch(map[string]string{"entry": be.Name})
	if v.lagKnown {
		metrics.EntryCopyLag.WithLabelValues(be.Name, be.Spec.BucketName, copyBucket).Set(v.lag.Seconds())
	}
	metrics.EntryCopyBytes.WithLabelValues(be.Name).Add(float64(o.result.Bytes))
	metrics.EntryCopyObjects.WithLabelValues(be.Name).Add(float64(o.result.Copied))
	if err := errors.Join(o.copyErr, o.sourceErr, o.copyFailed); err != nil {
		code := ""
		if codes := lasterror.Codes(err); len(codes) > 0 {
			code = string(codes[0])
		}
		metrics.EntryCopyFailures.WithLabelValues(be.Name, code).Inc()
	}
}
