// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
)

// maxRetry is the longest wait before a drill that proved nothing (the store failed) is tried
// again; never longer than the interval.
const maxRetry = 10 * time.Minute

// Restorer restores a chain whose full snapshot drill.FetchAndRestore left in dir (verified)
// and whose deltas it sends on deltas: drill.StreamRestorer, whose contract it is.
type Restorer = drill.StreamRestorer

// Deps is what the reconciler needs; it holds nothing of one request.
type Deps struct {
	// Deps are the periodic controllers' (its Reader reads the Cluster of the entry's shoot from
	// the API server; Started is when the drills started).
	periodic.Deps

	Options Options
	// SourceFor is the entry's read-only view of the store, with its own credentials.
	SourceFor SourceFor
	// Restore restores a fetched chain (drill.ChildRestorer's Restore in the binary).
	Restore Restorer
	// Slots bounds the drills at once in the process: one buffered channel of capacity
	// Options.Concurrency, shared by every reconciler of the process.
	Slots chan struct{}
}

// Reconciler drills each BackupEntry on its schedule and publishes BackupsRestorable. Entries
// never drilled are first drilled at their slot after Started (or after their creation, if
// later).
type Reconciler struct {
	Deps
}

// NewReconciler returns a reconciler with deps, started now unless deps say when.
func NewReconciler(deps Deps) *Reconciler {
	if deps.Started.IsZero() {
		deps.Started = deps.Now()
	}
	return &Reconciler{Deps: deps}
}

// drillLifecycle is what the drill publishes on an entry: BackupsRestorable and CopyRestorable,
// its parts of providerStatus (the inventory's stays) and its series. A migration's source entry
// shares its prefix with the entry restored into, which is drilled.
var drillLifecycle = periodic.Lifecycle[*extensionsv1alpha1.BackupEntry]{
	Conditions: []gardencorev1beta1.ConditionType{ConditionBackupsRestorable, ConditionCopyRestorable},
	Deleting: func(*extensionsv1alpha1.BackupEntry) string {
		return "The entry is being deleted: its backups are no longer drilled."
	},
	DeletingEvent: EventRestorabilityUnknown,
	Drop: func(be *extensionsv1alpha1.BackupEntry) bool {
		if ps, err := entryinfo.ReadProviderStatus(be); err != nil || (ps.Drill == nil && ps.DrillStarted == nil && ps.CopyDrill == nil && ps.CopyDrillStarted == nil) {
			return false
		}
		entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) {
			ps.Drill, ps.DrillStarted, ps.CopyDrill, ps.CopyDrillStarted = nil, nil, nil, nil
		})
		return true
	},
	Forget: metrics.ForgetDrills,
	Skip:   entryinfo.IsSourceEntry,
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return periodic.Reconcile(ctx, r.Deps.Deps, req, &extensionsv1alpha1.BackupEntry{}, r.Options.Interval, drillLifecycle, r.look)
}

// look drills a live entry's bucket and its copy (lookCopy), each when its drill is due, one
// after the other; it is looked at again when the sooner of them wants.
func (r *Reconciler) look(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (reconcile.Result, error) {
	primary, err := r.lookPrimary(ctx, be)
	if err != nil {
		return primary, err
	}
	copied, err := r.lookCopy(ctx, be)
	return sooner(primary, copied), err
}

// sooner is the sooner requeue of a and b (RequeueAfter 0: none wanted).
func sooner(a, b reconcile.Result) reconcile.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter != 0 && b.RequeueAfter < a.RequeueAfter) {
		return b
	}
	return a
}

// lookPrimary drills the entry's own bucket when its drill is due, and reports what the inventory
// found by names at once.
func (r *Reconciler) lookPrimary(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (reconcile.Result, error) {
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil {
		ps = entryinfo.ProviderStatus{}
	}
	last := ps.Drill
	moved := last != nil && (last.Bucket != be.Spec.BucketName || last.Region != be.Spec.Region)
	now := r.Now()
	switch {
	case ps.DrillStarted != nil:
		// A drill started and never reported: its process ended during it (this reconciler never
		// runs twice for one entry at once, and a process stopped in order removes its mark).
		return r.reportInterrupted(ctx, be, r.driller().primaryOf(be), last, ps.DrillStarted.Time, now)
	case !moved && newChainFindings(last, ps.Chains):
		// The inventory found a chain broken by names: reported at once, nothing downloaded.
		return r.reportChains(ctx, be, last, ps.Chains, now)
	case moved, healed(last, ps.Chains) && last.CutOff == "" && last.Interrupted == "":
		// The last drill was of another bucket, or a chain broken by names is sound by names
		// again: drill now. Not after a drill that was cut off: that entry waits for its turn,
		// an interval later, whatever its chains do meanwhile.
	case last == nil:
		if !extstatus.Succeeded(be) {
			return reconcile.Result{}, nil // its first successful reconcile wakes us
		}
		anchor := be.CreationTimestamp.Time
		if r.Started.After(anchor) {
			anchor = r.Started
		}
		if first := periodic.FirstSlot(be, r.Options.Interval, anchor); now.Before(first) {
			return reconcile.Result{RequeueAfter: first.Sub(now)}, r.publishPending(ctx, be, primarySide, first)
		}
	default:
		if due := r.due(last); now.Before(due) {
			return reconcile.Result{RequeueAfter: due.Sub(now)}, nil
		}
	}

	var chains *metav1.Time
	if ps.Chains != nil {
		chains = &ps.Chains.CheckedAt
	}
	st, _, err := r.driller().Drill(ctx, be, entryStatus{r, primarySide}, last, chains)
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: periodic.Jitter(max(r.due(st).Sub(now), time.Second))}, nil
}

// due is when the entry is drilled next after st: an interval later, or sooner when st proved
// nothing because the store or the drill's machinery failed.
func (r *Reconciler) due(st *drill.Status) time.Time {
	if failed(st) {
		return st.DrilledAt.Add(min(maxRetry, r.Options.Interval))
	}
	return st.DrilledAt.Add(r.Options.Interval)
}

// failed reports whether a drill proved nothing for the store's or the machinery's sake.
func failed(st *drill.Status) bool {
	if st.Error != "" {
		return true
	}
	for _, e := range st.Etcds {
		if e.Reason == ReasonDrillFailed {
			return true
		}
	}
	return false
}

func resultLabel(err error) string {
	switch reason := drill.ReasonOf(err); {
	case err == nil:
		return metrics.DrillRestored
	case reason == "" || reason == drill.ReasonTooLarge || reason == drill.ReasonCutOff:
		return metrics.DrillUnknown
	}
	return metrics.DrillNotRestorable
}

// excuse turns the findings the shoot's state explains into Unknown, as BackupsFresh judges a
// hibernated or deleted shoot: NoFullSnapshot where the shoot takes no snapshots now. Damage (a
// changed byte, a broken chain, a refused restore) is never excused: the backup is what it is.
func excuse(ctx context.Context, reader client.Reader, be *extensionsv1alpha1.BackupEntry, st *drill.Status) error {
	var missing []int
	for i, e := range st.Etcds {
		if e.Reason == string(drill.ReasonNoFullSnapshot) {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	reason, message, err := entryinfo.SnapshotsNotExpected(ctx, reader, be)
	if err != nil || reason == "" {
		return err
	}
	for _, i := range missing {
		e := &st.Etcds[i]
		e.Restorable, e.Reason, e.Message = string(gardencorev1beta1.ConditionUnknown), reason, message+"; "+e.Message
	}
	return nil
}

// publishPending says when an entry's store (s) never drilled is drilled first.
func (r *Reconciler) publishPending(ctx context.Context, be *extensionsv1alpha1.BackupEntry, s side, first time.Time) error {
	return r.setCondition(ctx, be, s, Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonNotDrilledYet,
		Message: fmt.Sprintf("Not drilled yet: the first restore drill is at %s (the entry's slot in the interval of %s).", first.UTC().Format(time.RFC3339), r.Options.Interval)}, nil)
}

// markStarted records on the entry that the drill of its store s starts now
// (ProviderStatus.DrillStarted, CopyDrillStarted): when
// the drill's process is killed during it (the container's memory limit), the next process finds
// the mark and reports the drill interrupted (reportInterrupted) instead of leaving the last
// verdict standing and drilling the entry again at once, into the same end.
func (r *Reconciler) markStarted(ctx context.Context, be *extensionsv1alpha1.BackupEntry, s side) error {
	now := metav1.NewTime(r.Now())
	err := extstatus.Patch(ctx, r.Client, r.Reader, be, func(be *extensionsv1alpha1.BackupEntry) bool {
		entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { *s.started(ps) = &now })
		return true
	})
	if err != nil {
		return fmt.Errorf("marking the restore drill of BackupEntry %s started: %w", be.Name, err)
	}
	return nil
}

// unmarkStarted removes the mark of a drill the stopping process ended (its ctx ended), within a
// few seconds of the manager's grace period; a mark left is reported as an interruption.
func (r *Reconciler) unmarkStarted(ctx context.Context, be *extensionsv1alpha1.BackupEntry, s side) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unmarkTimeout)
	defer cancel()
	err := extstatus.Patch(ctx, r.Client, r.Reader, be, func(be *extensionsv1alpha1.BackupEntry) bool {
		ps, err := entryinfo.ReadProviderStatus(be)
		if err != nil || *s.started(&ps) == nil {
			return false
		}
		entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { *s.started(ps) = nil })
		return true
	})
	if err != nil {
		log.FromContext(ctx).Info("Could not remove the mark of the stopped restore drill; the next process reports it interrupted", "error", err.Error())
	}
}

// unmarkTimeout bounds unmarkStarted, within the manager's graceful shutdown (30 s).
const unmarkTimeout = 10 * time.Second

// reportInterrupted publishes the drill of w that started at started and never reported: Unknown
// (DrillInterrupted), nothing proven, and the entry drilled again an interval later, after every
// entry due meanwhile, so that an entry whose drill kills the drill's process does not do so
// again at once, nor hold the drill slot from the others.
func (r *Reconciler) reportInterrupted(ctx context.Context, be *extensionsv1alpha1.BackupEntry, w where, last *drill.Status, started, now time.Time) (reconcile.Result, error) {
	st := &drill.Status{Bucket: w.bucket, Region: w.region, DrilledAt: metav1.NewTime(now),
		Interrupted: fmt.Sprintf("the drill that started at %s ended with its process before it reported (killed: out of memory, most likely; the restore-drill container's last state says why)", started.UTC().Format(time.RFC3339))}
	if last != nil {
		st.ChainsCheckedAt = last.ChainsCheckedAt
	}
	if err := r.publish(ctx, be, w.side, st, verdictOf(st, last)); err != nil {
		return reconcile.Result{}, err
	}
	log.FromContext(ctx).Info("A restore drill of the entry ended with its process", "store", w.side.store, "bucket", w.bucket, "started", started.UTC().Format(time.RFC3339))
	return reconcile.Result{RequeueAfter: periodic.Jitter(max(r.due(st).Sub(now), time.Second))}, nil
}
