// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package seedconfig

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// AddFollowerToManager adds a follower of the seed's Extension to mgr, for a process that runs
// beside the one that applies it (AddToManager), such as the restore drill's: it puts in force
// in p what that process recorded as applied (the Extension's status.providerStatus, written once
// its lastOperation succeeded), and writes nothing, so that the two processes never contend for
// the Extension's finalizer or status. Until that record exists, p waits when the seed declares
// the Extension or the Extension exists, as AddToManager's does; without the Extension, the
// defaults are in force.
func AddFollowerToManager(ctx context.Context, mgr manager.Manager, p *provider.Seeded, opts Options) error {
	name := decode.ExtensionType(p.Type())
	key := client.ObjectKey{Namespace: Namespace, Name: name}
	ex := &extensionsv1alpha1.Extension{}
	err := mgr.GetAPIReader().Get(ctx, key, ex)
	switch {
	case err == nil && ex.DeletionTimestamp == nil, err != nil && apierrors.IsNotFound(err) && opts.Declared:
		p.Await(fmt.Sprintf("the Seed declares this extension's configuration (spec.extensions type %s), and its Extension %s/%s is not applied yet", name, Namespace, name))
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("reading the seed's Extension %s/%s: %w", Namespace, name, err)
	}
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == key.Namespace && o.GetName() == key.Name })
	return builder.ControllerManagedBy(mgr).
		Named("seedconfig-follower-"+p.Type()).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1, SkipNameValidation: opts.Controller.SkipNameValidation}).
		For(&extensionsv1alpha1.Extension{}, builder.WithPredicates(ours)).
		Complete(&follower{seeded: p, reader: mgr.GetClient()})
}

// follower puts in force what the applying process recorded.
type follower struct {
	seeded *provider.Seeded
	reader client.Reader
}

// Reconcile implements reconcile.Reconciler.
func (f *follower) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ex := &extensionsv1alpha1.Extension{}
	if err := f.reader.Get(ctx, req.NamespacedName, ex); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		ex = nil
	}
	config, ready := Recorded(ex)
	if !ready {
		return reconcile.Result{}, nil // its status changes when the applying process records
	}
	if err := f.seeded.Apply(config, "status.providerStatus"); err != nil {
		// The applying process put it in force: this one is of another version.
		return reconcile.Result{}, fmt.Errorf("the seed configuration the controllers applied: %w", err)
	}
	log.FromContext(ctx).Info("Seed configuration in force as the controllers applied it")
	return reconcile.Result{}, nil
}

// Recorded is the seed configuration the applying process (the actuator) put in force for ex,
// and whether it recorded one: nil ex or one being deleted are the defaults (nil, true); else
// status.providerStatus once it is set or the last operation succeeded (empty then: no seed
// configuration of its own). A refused first configuration records nothing: the processes wait.
func Recorded(ex *extensionsv1alpha1.Extension) ([]byte, bool) {
	if ex == nil || ex.DeletionTimestamp != nil {
		return nil, true
	}
	if raw := rawOf(ex.Status.ProviderStatus); raw != nil {
		return raw, true
	}
	op := ex.Status.LastOperation
	return nil, op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded && op.Type != gardencorev1beta1.LastOperationTypeDelete
}
