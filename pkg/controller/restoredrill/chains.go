// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"fmt"
	"slices"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
)

// The cheap check: every inventory checks the chains by names on its own listing and publishes
// what it finds in status.providerStatus.chains (drill.ChainCheck). The drill's controller is
// woken by a change there and reports the findings at once, False, without downloading anything;
// when they are gone (a new full snapshot started a sound chain), it drills at once.

// chainsChanged passes status writes that change providerStatus.chains.
func chainsChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return fmt.Sprint(chainsOf(e.ObjectOld)) != fmt.Sprint(chainsOf(e.ObjectNew))
		},
	}
}

func chainsOf(obj client.Object) any {
	be, ok := obj.(*extensionsv1alpha1.BackupEntry)
	if !ok {
		return nil
	}
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil || ps.Chains == nil {
		return nil
	}
	return *ps.Chains
}

// newChainFindings reports whether cc holds findings the last drill status does not report yet.
func newChainFindings(last *drill.Status, cc *drill.ChainCheck) bool {
	if cc == nil || len(cc.Findings) == 0 {
		return false
	}
	return last == nil || last.ChainsCheckedAt == nil || last.ChainsCheckedAt.Before(&cc.CheckedAt)
}

// healed reports whether the last status has a finding by names that the inventory no longer
// finds: the chain is sound by names again, and only a drill can say whether it restores.
func healed(last *drill.Status, cc *drill.ChainCheck) bool {
	if last == nil {
		return false
	}
	for _, e := range last.Etcds {
		if e.ByNames && (cc == nil || !slices.ContainsFunc(cc.Findings, func(f drill.ChainFinding) bool { return f.Etcd == e.Name })) {
			return true
		}
	}
	return false
}

// reportChains publishes the inventory's findings by names as the etcds' verdicts (False),
// keeping the last drill's outcome for the other etcds and its schedule.
func (r *Reconciler) reportChains(ctx context.Context, be *extensionsv1alpha1.BackupEntry, last *drill.Status, cc *drill.ChainCheck, now time.Time) (reconcile.Result, error) {
	st := &drill.Status{Bucket: be.Spec.BucketName, Region: be.Spec.Region, DrilledAt: metav1.NewTime(now)}
	if last != nil {
		// The schedule stays the last drill's; a listing that failed then is superseded by the
		// inventory's, which succeeded.
		st.DrilledAt, st.Etcds, st.CutOff = last.DrilledAt, slices.Clone(last.Etcds), last.CutOff
	}
	checked := cc.CheckedAt
	st.ChainsCheckedAt = &checked
	for _, f := range cc.Findings {
		e := drill.EtcdStatus{Name: f.Etcd, Restorable: string(gardencorev1beta1.ConditionFalse), Reason: string(f.Reason), ByNames: true,
			Message: fmt.Sprintf("found by names in the inventory at %s, nothing downloaded: %v", checked.UTC().Format(time.RFC3339), drill.NewFinding(f.Reason, f.Key, f.Detail))}
		if i := slices.IndexFunc(st.Etcds, func(o drill.EtcdStatus) bool { return o.Name == f.Etcd }); i >= 0 {
			st.Etcds[i] = e
		} else {
			st.Etcds = append(st.Etcds, e)
		}
	}
	if err := excuse(ctx, r.Reader, be, st); err != nil {
		log.FromContext(ctx).Info("Could not read the shoot's Cluster", "error", err.Error())
	}
	if err := r.publish(ctx, be, primarySide, st, verdictOf(st, last)); err != nil {
		return reconcile.Result{}, err
	}
	observe(be.Name, metrics.StorePrimary, st, last)
	return reconcile.Result{RequeueAfter: max(r.due(st).Sub(now), time.Second)}, nil
}
