// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/predicates"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/reconciled"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// ReasonSecretMissing is the event reason of a BackupBucket whose credentials secret is gone.
const ReasonSecretMissing = "CredentialsSecretMissing"

// secretWatch reports a BackupBucket whose credentials secret does not exist: gardener's library
// stops at it before any actuator runs, leaving the bucket in Processing without an error.
// Nothing is lost meanwhile (the library does not delete a bucket without its secret).
type secretWatch struct {
	client   client.Client
	reader   client.Reader
	recorder events.EventRecorder
}

func addSecretWatch(mgr manager.Manager, p provider.Provider, recorder events.EventRecorder, opts options.AddOptions) error {
	return builder.ControllerManagedBy(mgr).
		Named("backupbucket-secret-"+p.Type()).
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: 1, SkipNameValidation: opts.Controller.SkipNameValidation}).
		For(&extensionsv1alpha1.BackupBucket{}, builder.WithPredicates(predicateutils.HasType(p.Type()), predicateutils.HasClass(opts.ExtensionClasses...), predicates.NotSucceeded())).
		Complete(&secretWatch{client: mgr.GetClient(), reader: mgr.GetAPIReader(), recorder: recorder})
}

// Reconcile implements reconcile.Reconciler.
func (w *secretWatch) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	bb := &extensionsv1alpha1.BackupBucket{}
	if found, err := reconciled.GetOrForget(ctx, w.client, req, bb, nil); !found {
		return reconcile.Result{}, err
	}
	exists, err := secrets.Exists(ctx, w.reader, bb.Spec.SecretRef)
	if err != nil || exists {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, extstatus.ReportError(ctx, logr.FromContextOrDiscard(ctx), w.client, w.recorder, bb, ReasonSecretMissing, &secrets.MissingError{Ref: bb.Spec.SecretRef})
}
