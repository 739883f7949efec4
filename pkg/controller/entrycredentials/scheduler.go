// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"
	"fmt"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/predicates"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/reconciled"
)

// MaxRotationWait bounds how long the rotation scheduler sleeps before looking at an entry again
// (the etcd-backup secret it reads is not watched).
const MaxRotationWait = time.Hour

// SeedConfigPendingRetry is how soon the rotation scheduler looks again at an entry while the
// provider awaits the seed's configuration (*provider.SeedConfigPendingError): nothing wakes it
// when the configuration is applied.
const SeedConfigPendingRetry = time.Minute

// rotationScheduler requests a reconcile of a BackupEntry (the operation annotation, as
// gardenlet sets it) when its own credential is due for rotation: by period, or on request
// (AnnotationRotateCredentials); and when a retired credential of it is to end
// (entryrecord.Record.NextEnd), which the pass ends. gardener's library reconciles an entry only on that annotation,
// a generation change or a failed last operation (its default predicates), and its reconciler
// never requeues a succeeded one: without the scheduler a credential would outlive its period,
// and a request would wait for the next unrelated reconcile.
type rotationScheduler struct {
	creds  *Credentials
	client client.Client
}

// NewRotationScheduler returns the scheduler of creds's entries, asking for their reconciles
// with c.
func NewRotationScheduler(creds *Credentials, c client.Client) reconcile.Reconciler {
	return &rotationScheduler{creds: creds, client: c}
}

// AddRotationScheduler registers the scheduler for creds's entries (one worker: it reads and
// annotates).
func AddRotationScheduler(mgr manager.Manager, creds *Credentials, opts options.AddOptions) error {
	p := creds.provider
	return builder.ControllerManagedBy(mgr).
		Named("backupentry-credentials-"+p.Type()).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1, SkipNameValidation: opts.Controller.SkipNameValidation}).
		For(&extensionsv1alpha1.BackupEntry{}, builder.WithPredicates(predicateutils.HasType(p.Type()), predicateutils.HasClass(opts.ExtensionClasses...),
			predicate.Or(predicates.SpecOrOperationChanged(), rotationRequestChanged()))).
		Complete(NewRotationScheduler(creds, mgr.GetClient()))
}

// rotationRequestChanged passes updates that set or change AnnotationRotateCredentials.
func rotationRequestChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			v := e.ObjectNew.GetAnnotations()[AnnotationRotateCredentials]
			return v != "" && v != e.ObjectOld.GetAnnotations()[AnnotationRotateCredentials]
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// Reconcile implements reconcile.Reconciler.
func (s *rotationScheduler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	be := &extensionsv1alpha1.BackupEntry{}
	if found, err := reconciled.GetOrForget(ctx, s.client, req, be, nil); !found {
		return reconcile.Result{}, err
	}
	if be.DeletionTimestamp != nil || entryinfo.IsGardenEntry(be) {
		return reconcile.Result{}, nil
	}
	// Awaiting the seed's configuration, or with a providerConfig that does not decode, the
	// entry's settings are unknown, not off: looked at again (its own reconcile reports why).
	settings, _, err := s.creds.EntrySettings(be)
	if err != nil {
		logf.FromContext(ctx).V(1).Info("Entry credential settings unknown; looking again", "entry", be.Name, "error", err.Error())
		return reconcile.Result{RequeueAfter: SeedConfigPendingRetry}, nil
	}
	if settings == nil {
		return reconcile.Result{}, nil // off: no credential of its own to rotate
	}
	now := time.Now()
	due, ok := s.due(ctx, be, settings, now)
	if !ok {
		return reconcile.Result{}, nil
	}
	if wait := due.Sub(now); wait > 0 {
		return reconcile.Result{RequeueAfter: min(wait, MaxRotationWait)}, nil
	}
	if !extstatus.Succeeded(be) {
		// The library retries a failing entry with back-off, and that pass rotates: do not add to it.
		return reconcile.Result{RequeueAfter: 5 * time.Minute}, nil
	}
	if err := reconciled.RequestReconcile(ctx, s.client, be); err != nil {
		return reconcile.Result{}, fmt.Errorf("requesting a reconcile of BackupEntry %s to rotate its credential: %w", be.Name, err)
	}
	// Look again once the reconcile has had its chance (a failing one keeps the time due).
	return reconcile.Result{RequeueAfter: time.Minute}, nil
}

// due is when the entry is to be reconciled (Due); ok is false when nothing is
// ever due, or the etcd-backup secret or its record cannot be read (the entry's own reconcile
// reports it).
func (s *rotationScheduler) due(ctx context.Context, be *extensionsv1alpha1.BackupEntry, settings *credentials.EntrySettings, now time.Time) (time.Time, bool) {
	request := be.Annotations[AnnotationRotateCredentials]
	var record entryrecord.Record
	if request == "" {
		secret, err := s.creds.ReadEtcdBackupSecret(ctx, be)
		if err != nil || secret == nil {
			return time.Time{}, false
		}
		if record, _, err = entryrecord.Read(be.Name, secret.Annotations); err != nil {
			return time.Time{}, false
		}
	}
	return Due(settings, request, record, now)
}
