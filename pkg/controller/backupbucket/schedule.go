// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/predicates"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/reconciled"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// maxScheduleWait bounds how long the scheduler sleeps before looking at a bucket again (its
// generated secret is read uncached, so it is not watched).
const maxScheduleWait = time.Hour

// scheduler requests a reconcile of a BackupBucket (the operation annotation, as gardenlet sets
// it) when one of its generated credentials is due: rotation by period, revocation of the
// previous credential after its grace period, retirement; and while its hand-back waits
// (handBackDue). gardenlet reconciles a bucket only when
// its spec changes, so without it a credential could outlive its period (and an OpenStack one
// expire) on a bucket nobody touches.
type scheduler struct {
	provider provider.Provider
	reader   client.Reader
	client   client.Client
}

// addScheduler registers the scheduler for p's buckets (one worker: it only reads and annotates).
func addScheduler(mgr manager.Manager, p provider.Provider, opts options.AddOptions) error {
	return builder.ControllerManagedBy(mgr).
		Named("backupbucket-credentials-"+p.Type()).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1, SkipNameValidation: opts.Controller.SkipNameValidation}).
		// Not woken by status writes of the probe: only a reconcile changes what falls due.
		For(&extensionsv1alpha1.BackupBucket{}, builder.WithPredicates(predicateutils.HasType(p.Type()), predicateutils.HasClass(opts.ExtensionClasses...), predicates.SpecOrOperationChanged())).
		Complete(&scheduler{provider: p, reader: mgr.GetAPIReader(), client: mgr.GetClient()})
}

// Reconcile implements reconcile.Reconciler.
func (s *scheduler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	bb := &extensionsv1alpha1.BackupBucket{}
	if err := s.client.Get(ctx, req.NamespacedName, bb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if bb.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	secret, exists, err := readGenerated(ctx, s.reader, bb)
	if err != nil {
		return reconcile.Result{}, err
	}
	cfg, _ := connect.BucketConfig(s.provider, bb) // an invalid config: only the recorded times count
	now := time.Now()
	due, ok := handBackDue(bb, cfg)
	if exists {
		if d, generated := nextDue(secret.Annotations, cfg.GenerationSettings().RotationPeriod()); generated && (!ok || d.Before(due)) {
			due, ok = d, true
		}
	}
	if !ok {
		return reconcile.Result{}, nil // nothing falls due
	}
	if wait := due.Sub(now); wait > 0 {
		return reconcile.Result{RequeueAfter: min(wait, maxScheduleWait)}, nil
	}
	if op := bb.Status.LastOperation; op != nil && op.State != gardencorev1beta1.LastOperationStateSucceeded {
		// The library already retries a failing bucket with back-off: do not add to it.
		return reconcile.Result{RequeueAfter: 5 * time.Minute}, nil
	}
	if err := reconciled.RequestReconcile(ctx, s.client, bb); err != nil {
		return reconcile.Result{}, fmt.Errorf("requesting a reconcile of BackupBucket %s for its generated credentials: %w", bb.Name, err)
	}
	// Look again once the reconcile has had its chance (a failing one keeps the time due).
	return reconcile.Result{RequeueAfter: time.Minute}, nil
}

// nextDue is when the generated secret's credentials next need the bucket controller: the
// previous credential's revocation, the retirement, or (without a previous one, which a rotation
// waits for) the rotation by period. ok is false when nothing is ever due.
func nextDue(annotations map[string]string, period time.Duration) (due time.Time, ok bool) {
	consider := func(t time.Time) { // an unparsable time is the zero time: due at once, as for the actuator
		if !ok || t.Before(due) {
			due, ok = t, true
		}
	}
	if v := annotations[AnnotationRetireAfter]; v != "" {
		consider(parseTime(v))
		if v := annotations[annotationRevokePrevious]; v != "" {
			consider(parseTime(v)) // generation switched on again waits for it
		}
		return due, ok // a retiring credential is not rotated
	}
	if v := annotations[annotationRevokePrevious]; v != "" {
		consider(parseTime(v))
	} else if period > 0 && annotations[annotationIssuedAt] != "" {
		consider(parseTime(annotations[annotationIssuedAt]).Add(period))
	}
	return due, ok
}
