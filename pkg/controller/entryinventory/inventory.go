// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinventory

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// ConditionBackupsFresh on a BackupEntry says whether the newest full and delta snapshots of each
// etcd under its prefix are within their thresholds, as its last inventory found them.
const ConditionBackupsFresh gardencorev1beta1.ConditionType = "BackupsFresh"

// ReasonInventoryFailed is BackupsFresh's reason (Unknown) while the entry's listing fails.
const ReasonInventoryFailed = "InventoryFailed"

// ReasonRecounting is BackupsFresh's reason (Unknown) after the entry's bucket or region changed
// while the new place is not counted yet (its listing failed): the last inventory, of the old
// place, no longer applies.
const ReasonRecounting = "Recounting"

// ReasonSeedConfigPending is BackupsFresh's reason (Unknown) while the seed configuration in force
// is awaited (*provider.SeedConfigPendingError): the thresholds are not known yet.
const ReasonSeedConfigPending = "SeedConfigPending"

// seedConfigRetry is how soon an entry is looked at again while the seed configuration is awaited.
const seedConfigRetry = 10 * time.Second

// Event reasons of the inventory, emitted when BackupsFresh changes.
const (
	ReasonBackupsFresh = "BackupsFresh"
	ReasonBackupsStale = "BackupsStale"
)

// minRecount is the least time between two inventories of one entry: a verdict about to turn
// False is confirmed by a new listing, but not more often than this.
const minRecount = time.Minute

// inventoryTaker takes each entry's inventory on an interval and judges its freshness. It only reads
// the store. Entries older than its start and never counted are first counted at their slots
// after it (periodic.FirstSlot).
type inventoryTaker struct {
	periodic.Deps

	opts Options
}

// InventoryController is the inventory of p's entries as a periodic controller. With its
// interval 0 (switched off) its one look at each entry (at the start, and on spec or operation
// changes) removes what an earlier run published there, which nothing would refresh any more.
func InventoryController(opts Options) periodic.Controller {
	return periodic.Controller{Name: "backupentry-inventory", Recorder: "backupentry", For: &extensionsv1alpha1.BackupEntry{},
		New: func(d periodic.Deps) reconcile.Reconciler { return &inventoryTaker{Deps: d, opts: opts} }}
}

// inventoryLifecycle is what the inventory publishes on an entry: BackupsFresh, its part of
// providerStatus (the inventory and the chains found by names; the drill's part stays) and its
// series. An entry being deleted has deletion metrics of its own, forgotten when it is gone. A
// migration's source entry shares its prefix with the entry it is restored into, which is
// counted.
var inventoryLifecycle = periodic.Lifecycle[*extensionsv1alpha1.BackupEntry]{
	Conditions: []gardencorev1beta1.ConditionType{ConditionBackupsFresh},
	Deleting: func(*extensionsv1alpha1.BackupEntry) string {
		return "The entry is being deleted: its backups are no longer counted or judged."
	},
	Drop: func(be *extensionsv1alpha1.BackupEntry) bool {
		if !holdsInventory(be) {
			return false
		}
		entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { ps.Inventory, ps.Chains = nil, nil })
		return true
	},
	Forget: metrics.ForgetEntry,
	Gone: func(name string) {
		metrics.ForgetEntry(name)
		metrics.ForgetDeletion(metrics.KindBackupEntry, name)
		metrics.ForgetOperation(metrics.KindBackupEntry, name)
	},
	Skip: entryinfo.IsSourceEntry,
}

// Reconcile implements reconcile.Reconciler.
func (c *inventoryTaker) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return periodic.Reconcile(ctx, c.Deps, req, &extensionsv1alpha1.BackupEntry{}, c.opts.Interval, inventoryLifecycle, c.look)
}

// look counts a live entry when its inventory is due, and judges it whenever it is woken.
func (c *inventoryTaker) look(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (reconcile.Result, error) {
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil {
		ps = entryinfo.ProviderStatus{} // not ours to keep: the next inventory replaces it
	}
	// Where the entry's snapshots live (a garden's are not under its name); when that cannot be
	// told, the listing is not taken and the reason is the verdict's (InventoryFailed).
	loc, locErr := entryinfo.LocateEntry(ctx, c.Reader, be)
	// The store the shoot writes now: the copy bucket while the entry serves it (copy.serve).
	st, err := c.writtenOf(ctx, be)
	if err != nil && locErr == nil {
		locErr = fmt.Errorf("which bucket the shoot writes cannot be told: %w", err)
	}
	// The entry's spec names another bucket or region (or its snapshots another prefix) than the
	// last inventory was taken in (a migration changes spec.bucketName): that inventory and its
	// verdict say nothing about where the backups go now. They are dropped, and the new place is
	// counted at once.
	var movedFrom *place
	if ps.Inventory != nil && locErr == nil && !placeOf(st, loc).counts(ps.Inventory) {
		from := placeOfInventory(ps.Inventory)
		movedFrom, ps.Inventory = &from, nil
		metrics.ForgetEntry(be.Name)
	}
	cond := v1beta1helper.GetCondition(be.Status.Conditions, ConditionBackupsFresh)
	recounting := movedFrom != nil || (cond != nil && cond.Reason == ReasonRecounting)
	if ps.Inventory == nil && !extstatus.Succeeded(be) {
		if movedFrom != nil {
			return reconcile.Result{}, c.publishRecount(ctx, be, movedFrom, placeOf(st, loc), nil)
		}
		return reconcile.Result{}, nil // its first successful reconcile wakes us
	}
	now := c.Now()
	if ps.Inventory == nil && !recounting {
		anchor := be.CreationTimestamp.Time
		if c.Started.After(anchor) {
			anchor = c.Started
		}
		if first := periodic.FirstSlot(be, c.opts.Interval, anchor); now.Before(first) {
			return reconcile.Result{RequeueAfter: first.Sub(now)}, nil
		}
	}
	thresholds, err := c.thresholdsOf(be)
	if err != nil {
		// The seed configuration in force is awaited: the thresholds are not known, so there is
		// no verdict. BackupsFresh says so; the metrics keep what the last verdict said.
		verdict := inventory.Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonSeedConfigPending,
			Message: fmt.Sprintf("The backups are not judged: %v.", err)}
		if perr := c.publish(ctx, be, nil, false, verdict); perr != nil {
			return reconcile.Result{}, perr
		}
		return reconcile.Result{RequeueAfter: seedConfigRetry}, nil
	}
	verdict := c.judge(ctx, be, ps.Inventory, thresholds, now)
	if ps.Inventory != nil {
		due := ps.Inventory.CountedAt.Add(c.opts.Interval)
		confirm := verdict.Status != gardencorev1beta1.ConditionTrue && now.Sub(ps.Inventory.CountedAt.Time) >= minRecount
		if now.Before(due) && !confirm {
			// Nothing to list: only the verdict may have moved with the clock.
			if err := c.publish(ctx, be, nil, false, verdict); err != nil {
				return reconcile.Result{}, err
			}
			observeInventory(be, ps.Inventory, verdict)
			return reconcile.Result{RequeueAfter: nextLook(now, due, verdict.Recheck)}, nil
		}
	}

	inv, findings, chainsErr, err := inventory.Inventory{}, []drill.ChainFinding(nil), error(nil), locErr
	if err == nil {
		inv, findings, chainsErr, err = c.take(ctx, st, loc.Prefix, now)
	}
	if err != nil && recounting {
		// Nothing is known of the new place: the old one's inventory is not its verdict.
		if perr := c.publishRecount(ctx, be, movedFrom, placeOf(st, loc), err); perr != nil {
			return reconcile.Result{}, perr
		}
		log.FromContext(ctx).Info("Inventory of the entry's new bucket failed, retrying in a minute", "error", err.Error())
		return reconcile.Result{RequeueAfter: minRecount}, nil
	}
	if err != nil {
		// Freshness is unknown now; the metric keeps what the last inventory says at this time
		// (its snapshots are at least that old), so an alert on stale backups does not clear
		// because the listing fails too. Retried in a minute, not in a back-off storm of listings.
		lastKnown := c.judge(ctx, be, ps.Inventory, thresholds, now)
		verdict = inventory.Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonInventoryFailed,
			Message: fmt.Sprintf("Counting the objects under the entry's prefix failed: %v. The last inventory says: %s", err, lastKnown.Message)}
		if perr := c.publish(ctx, be, nil, false, verdict); perr != nil {
			return reconcile.Result{}, perr
		}
		observeInventory(be, nil, lastKnown)
		log.FromContext(ctx).Info("Inventory failed, retrying in a minute", "error", err.Error())
		return reconcile.Result{RequeueAfter: minRecount}, nil
	}
	switch {
	case recounting:
		inv.Since = &metav1.Time{Time: now}
	case ps.Inventory != nil:
		inv.Since = ps.Inventory.Since
	}
	verdict = c.judge(ctx, be, &inv, thresholds, now)
	if err := c.publish(ctx, be, &inv, false, verdict); err != nil {
		return reconcile.Result{}, err
	}
	if chainsErr != nil {
		// The chains are unknown this time: the last findings stay as they are.
		log.FromContext(ctx).Info("Checking the snapshot chains failed; the last findings stay", "error", chainsErr.Error())
	} else if err := c.publishChains(ctx, be, findings, now); err != nil {
		return reconcile.Result{}, err
	}
	observeInventory(be, &inv, verdict)
	return reconcile.Result{RequeueAfter: nextLook(now, now.Add(periodic.Jitter(c.opts.Interval)), verdict.Recheck)}, nil
}

// judge is inventory.Judge, except that snapshots too old or missing are no failure where the
// shoot takes none now (hibernated, or gone): the verdict is then Unknown with that reason.
func (c *inventoryTaker) judge(ctx context.Context, be *extensionsv1alpha1.BackupEntry, inv *inventory.Inventory, t inventory.Thresholds, now time.Time) inventory.Verdict {
	anchor := be.CreationTimestamp.Time
	if inv != nil && inv.Since != nil && inv.Since.After(anchor) {
		anchor = inv.Since.Time // moved: the grace for a first full snapshot starts there
	}
	verdict := inventory.Judge(inv, t, anchor, now)
	if !anchor.Equal(be.CreationTimestamp.Time) && (verdict.Reason == inventory.ReasonNoSnapshotYet || verdict.Reason == inventory.ReasonNoFullSnapshot) {
		verdict.Message += fmt.Sprintf(" (the age counts from %s, when the entry was first counted in %s)", anchor.UTC().Format(time.RFC3339), placeOfInventory(inv))
	}
	if verdict.Status != gardencorev1beta1.ConditionFalse {
		return verdict
	}
	reason, message, err := entryinfo.SnapshotsNotExpected(ctx, c.Reader, be)
	if err != nil {
		// Whether the shoot takes snapshots now is unknown: the snapshots' age is known, and a
		// red that may be excused beats a condition that stays green for as long as the
		// Cluster cannot be read.
		if entryinfo.IsGardenEntry(be) {
			verdict.Message += fmt.Sprintf(" (whether the garden is gone is unknown: %v)", err)
			log.FromContext(ctx).Info("Could not read the entry's Garden", "error", err.Error())
		} else {
			verdict.Message += fmt.Sprintf(" (whether the shoot is hibernated or gone is unknown: %v)", err)
			log.FromContext(ctx).Info("Could not read the shoot's Cluster", "error", err.Error())
		}
		return verdict
	}
	if reason == "" {
		return verdict
	}
	return inventory.Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: reason, Message: message + "; " + verdict.Message, Recheck: verdict.Recheck}
}

// take lists prefix, the entry's (Locate), once in st, the store the shoot writes (the entry's
// bucket with its own credentials, or the copy bucket with the copy's while it is served).
// It checks the snapshot chains by their names on the same listing, selected as the drill does
// (drill.Collector with the store's SnapshotRule): findings are returned, nothing is downloaded.
// chainsErr is the chain check's own failure (the rule or an exclude mark could not be read):
// the findings are then unknown, and the inventory stands.
func (c *inventoryTaker) take(ctx context.Context, st written, prefix objectstore.Prefix, now time.Time) (inv inventory.Inventory, findings []drill.ChainFinding, chainsErr, err error) {
	data, err := connect.NewDataPlane(ctx, c.Reader, st.provider, st.secret, st.region)
	if err != nil {
		return inventory.Inventory{}, nil, nil, err
	}
	ctx = objectstore.WithOperation(ctx, "inventory")
	start := time.Now()
	rule, chainsErr := data.SnapshotRule(ctx, st.bucket)
	chains := drill.NewCollector(prefix.String(), rule)
	inv, err = inventory.Take(ctx, teeListing{data, chains}, st.bucket, prefix.String(), now)
	inv.Bucket, inv.Region, inv.Prefix = st.bucket, st.region, prefix.String()
	metrics.InventoryDuration.WithLabelValues().Observe(time.Since(start).Seconds())
	metrics.InventoryPages.Add(float64(inv.Pages))
	if err != nil || chainsErr != nil {
		return inv, nil, chainsErr, err
	}
	checked, chainsErr := chains.Chains(ctx)
	return inv, drill.FindingsOf(checked), chainsErr, nil
}

// holdsInventory reports whether be's providerStatus holds the inventory's part (an inventory or
// the chains found by names), or cannot be read (then the next write replaces it). Its other
// parts (the drill's, the Etcd container) are not the inventory's to drop.
func holdsInventory(be *extensionsv1alpha1.BackupEntry) bool {
	if be.Status.ProviderStatus == nil {
		return false
	}
	ps, err := entryinfo.ReadProviderStatus(be)
	return err != nil || ps.Inventory != nil || ps.Chains != nil
}

// publish writes a new inventory (when inv is set; drop removes the last one instead) and the
// BackupsFresh condition, and emits an event when the condition changes.
func (c *inventoryTaker) publish(ctx context.Context, be *extensionsv1alpha1.BackupEntry, inv *inventory.Inventory, drop bool, verdict inventory.Verdict) error {
	var previous *gardencorev1beta1.Condition
	err := extstatus.Patch(ctx, c.Client, c.Reader, be, func(be *extensionsv1alpha1.BackupEntry) bool {
		old := v1beta1helper.GetCondition(be.Status.Conditions, ConditionBackupsFresh)
		previous = old
		dropping := drop && holdsInventory(be)
		if inv == nil && !dropping && old != nil && old.Status == verdict.Status && old.Reason == verdict.Reason && old.Message == verdict.Message {
			return false
		}
		switch {
		case inv != nil:
			entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { ps.Inventory = inv })
		case dropping:
			entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { ps.Inventory, ps.Chains = nil, nil }) // the drill's part stays
		}
		be.Status.Conditions, previous = extstatus.SetCondition(be.Status.Conditions, ConditionBackupsFresh, verdict.Status, verdict.Reason, verdict.Message, c.Now())
		return true
	})
	if err != nil {
		return fmt.Errorf("publishing the inventory of BackupEntry %s: %w", be.Name, err)
	}
	if previous == nil || previous.Status != verdict.Status || previous.Reason != verdict.Reason {
		eventType, reason := corev1.EventTypeNormal, ReasonBackupsFresh
		if verdict.Status == gardencorev1beta1.ConditionFalse {
			eventType, reason = corev1.EventTypeWarning, ReasonBackupsStale
		}
		c.Recorder.Eventf(be, nil, eventType, reason, "Inventory", "%s", extstatus.EventNote(verdict.Message))
	}
	return nil
}

// observeInventory sets the metrics that mirror an entry's inventory (when inv is set) and its
// verdict, the latter with the entry's bucket.
func observeInventory(be *extensionsv1alpha1.BackupEntry, inv *inventory.Inventory, verdict inventory.Verdict) {
	entry := be.Name
	var fresh *bool
	if verdict.Status == gardencorev1beta1.ConditionTrue || verdict.Status == gardencorev1beta1.ConditionFalse {
		fresh = new(verdict.Status == gardencorev1beta1.ConditionTrue)
	}
	metrics.SetBackupsFresh(entry, be.Spec.BucketName, fresh)
	if inv == nil {
		return
	}
	metrics.LatestSnapshot.DeletePartialMatch(prometheus.Labels{"entry": entry}) // an etcd may be gone from the listing
	metrics.EntryObjects.WithLabelValues(entry).Set(float64(inv.Objects))
	metrics.EntryBytes.WithLabelValues(entry).Set(float64(inv.Bytes))
	for _, etcd := range inv.Etcds {
		for kind, s := range map[string]*inventory.Snapshot{metrics.SnapshotFull: etcd.LatestFull, metrics.SnapshotDelta: etcd.LatestDelta} {
			if s == nil {
				continue
			}
			metrics.LatestSnapshot.WithLabelValues(entry, etcd.Name, kind).Set(float64(s.Time.Unix()))
		}
	}
}

// nextLook is when to look again: the next inventory, or earlier when the verdict changes by the
// clock alone.
func nextLook(now, due, recheck time.Time) time.Duration {
	next := due
	if !recheck.IsZero() && recheck.Before(next) {
		next = recheck
	}
	return max(next.Sub(now), time.Second)
}

// thresholdsOf is the extension's thresholds (the flags), overridden by the backupFreshness of the
// entry's providerConfig merged with the seed configuration in force (connect.EntryConfig, as
// every controller decodes it; gardenlet copies nothing into an entry whose bucket has no
// providerConfig, and the seed's settings still apply). An invalid entry config is the bucket's
// controller's to report: the seed configuration's settings judge meanwhile. While the seed
// configuration is awaited, the error is the *provider.SeedConfigPendingError: nothing is to be
// judged with the defaults.
func (c *inventoryTaker) thresholdsOf(be *extensionsv1alpha1.BackupEntry) (inventory.Thresholds, error) {
	t := c.opts.Thresholds
	cfg, err := connect.EntryConfig(c.Provider, be)
	if pending := (*provider.SeedConfigPendingError)(nil); errors.As(err, &pending) {
		return t, err
	}
	if cfg.ProviderConfig == nil {
		return t, nil
	}
	if s := cfg.FreshnessSettings(); s != nil {
		if s.FullSnapshotMaxAge != nil {
			t.FullSnapshotMaxAge = s.FullSnapshotMaxAge.Duration
		}
		if s.DeltaSnapshotMaxAge != nil {
			t.DeltaSnapshotMaxAge = s.DeltaSnapshotMaxAge.Duration
		}
	}
	return t, nil
}
