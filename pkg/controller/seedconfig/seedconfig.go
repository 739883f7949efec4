// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package seedconfig is the controller of the seed's Extension that holds this extension's seed
// configuration (kind Extension, type backup-<provider>, class seed, in the seed's garden
// namespace; gardenlet makes it of the Seed's spec.extensions entry of that type). It validates the
// Extension's providerConfig, applies it to the binary's provider.Seeded, reports the result in
// the Extension's status (gardenlet's Seed reconcile waits for it and shows its error in the
// Seed's status.lastOperation) and asks
// the seed's BackupBuckets and BackupEntries to reconcile with it.
package seedconfig

import (
	"context"
	"errors"
	"fmt"
	"slices"

	extensionsextensioncontroller "github.com/gardener/gardener/extensions/pkg/controller/extension"
	extensionspredicate "github.com/gardener/gardener/extensions/pkg/predicate"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	extensionsv1alpha1helper "github.com/gardener/gardener/pkg/api/extensions/v1alpha1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Namespace is where gardenlet writes a seed's Extensions: its garden namespace.
const Namespace = v1beta1constants.GardenNamespace

// configAt is the field path of the seed configuration in the Extension, where its problems are
// named.
const configAt = "spec.providerConfig"

// Options say what the controller serves.
type Options struct {
	// Declared is true when the Seed declares the Extension (spec.extensions has an entry of type
	// backup-<provider> that is not disabled; the chart reads it from gardenlet's values): until
	// the Extension is applied, the provider waits (provider.Seeded.Await) instead of acting on
	// the defaults.
	Declared bool
	// BucketClasses are the extension classes the BackupBucket controller serves (empty: shoot):
	// the buckets asked to reconcile after a change.
	BucketClasses []extensionsv1alpha1.ExtensionClass
	// Controller are the controller's options.
	Controller controller.Options
	// Rehearsal is true in a rehearsal (pkg/controller/rehearsal): the BackupBuckets and
	// BackupEntries are the incumbent's, so a change asks none of them to reconcile (the
	// operation annotation is a write the incumbent's controllers would act on).
	Rehearsal bool
}

// AddToManager adds the controller of the seed's Extension decode.ExtensionType(p.Type()) to mgr.
// Before it returns, the provider waits if the seed declares the Extension or the Extension
// exists (read from the API server: the cache is not started yet), so that no reconcile acts on
// the defaults before the Extension is applied.
func AddToManager(ctx context.Context, mgr manager.Manager, p *provider.Seeded, opts Options) error {
	name := decode.ExtensionType(p.Type())
	ex := &extensionsv1alpha1.Extension{}
	err := mgr.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, ex)
	switch {
	case err == nil && ex.DeletionTimestamp == nil, err != nil && apierrors.IsNotFound(err) && opts.Declared:
		p.Await(fmt.Sprintf("the Seed declares this extension's configuration (spec.extensions type %s), and its Extension %s/%s is not applied yet", name, Namespace, name))
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("reading the seed's Extension %s/%s: %w", Namespace, name, err)
	}
	return extensionsextensioncontroller.Add(mgr, extensionsextensioncontroller.AddArgs{
		Actuator:          &actuator{seeded: p, client: mgr.GetClient(), bucketClasses: opts.BucketClasses, rehearsal: opts.Rehearsal},
		Name:              "seedconfig-" + p.Type(),
		FinalizerSuffix:   "gardener-extension-backup-" + p.Type(),
		ControllerOptions: opts.Controller,
		Predicates:        Predicates(),
		Type:              name,
		ExtensionClasses:  []extensionsv1alpha1.ExtensionClass{extensionsv1alpha1.ExtensionClassSeed},
	})
}

// Predicates are gardener's default ones (the operation annotation, a deletion, a last operation
// that did not succeed) and every create event, so that a restarted binary applies the Extension
// again although its last operation succeeded.
func Predicates() []predicate.Predicate {
	created := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return true },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return []predicate.Predicate{predicate.Or(append(extensionspredicate.DefaultControllerPredicates(false), created)...)}
}

// actuator holds only what every request shares.
type actuator struct {
	seeded        *provider.Seeded
	client        client.Client
	bucketClasses []extensionsv1alpha1.ExtensionClass
	rehearsal     bool
}

var _ extensionsextensioncontroller.Actuator = (*actuator)(nil)

// Reconcile applies the Extension's providerConfig. A refused one leaves the configuration in
// force as it was and fails with its field paths and ERR_CONFIGURATION_PROBLEM, saying what stays
// in force; after a restart, when nothing was applied yet, the configuration the Extension's
// status records as the last one applied (status.providerStatus) is put in force instead of
// waiting on, so that a bad change never stops backups.
func (a *actuator) Reconcile(ctx context.Context, log logr.Logger, ex *extensionsv1alpha1.Extension) error {
	if ex.Namespace != Namespace {
		return v1beta1helper.NewErrorWithCodes(fmt.Errorf("metadata.namespace: only the seed's Extension %s/%s holds this extension's configuration (gardenlet writes it from the Seed's spec.extensions); this one is ignored", Namespace, ex.Name), gardencorev1beta1.ErrorConfigurationProblem)
	}
	before := inForce(a.seeded)
	raw := rawOf(ex.Spec.ProviderConfig)
	if err := a.seeded.Apply(raw, configAt); err != nil {
		return a.refused(ctx, log, ex, err)
	}
	log.Info("Seed configuration applied", "generation", ex.Generation)
	if err := a.record(ctx, ex, raw); err != nil {
		return err
	}
	return a.changed(ctx, log, before)
}

// refused reports a providerConfig that Apply refused.
func (a *actuator) refused(ctx context.Context, log logr.Logger, ex *extensionsv1alpha1.Extension, refusal error) error {
	stays := "the configuration applied before stays in force"
	if _, pending := a.seeded.InForce(); pending != nil {
		stays = "nothing was applied since the start, so the BackupBuckets and BackupEntries wait"
		if last := rawOf(ex.Status.ProviderStatus); last != nil {
			if err := a.seeded.Apply(last, "status.providerStatus"); err == nil {
				stays = "the configuration last applied (status.providerStatus) is in force"
				log.Info("Seed configuration refused; the one last applied is in force", "error", refusal.Error())
				if err := a.changed(ctx, log, pendingKey); err != nil {
					return errors.Join(refusal, err)
				}
			}
		}
	}
	return v1beta1helper.NewErrorWithCodes(fmt.Errorf("%w; refused: %s", refusal, stays), gardencorev1beta1.ErrorConfigurationProblem)
}

// record keeps the applied providerConfig in status.providerStatus: the configuration put in
// force after a restart while a newer one is refused.
func (a *actuator) record(ctx context.Context, ex *extensionsv1alpha1.Extension, raw []byte) error {
	var applied *runtime.RawExtension
	if raw != nil { // JSON: the API server stores a RawExtension as JSON
		applied = &runtime.RawExtension{Raw: raw}
	}
	patch := client.MergeFrom(ex.DeepCopy())
	ex.Status.ProviderStatus = applied
	if !a.rehearsal {
		// The controllers took over: a rehearsal's condition would describe the seed as it was
		// under the incumbent.
		ex.Status.Conditions = slices.DeleteFunc(ex.Status.Conditions, func(c gardencorev1beta1.Condition) bool { return c.Type == ConditionRehearsal })
	}
	if err := a.client.Status().Patch(ctx, ex, patch); err != nil {
		return fmt.Errorf("recording the applied configuration in status.providerStatus: %w", err)
	}
	return nil
}

// ConditionRehearsal is the condition a rehearsal (--rehearse) keeps on the seed's Extension. The
// rehearsal sets it; the controllers of the switch remove it at their first apply (record), and
// the Extension's deletion ends it with the Extension.
const ConditionRehearsal gardencorev1beta1.ConditionType = "Rehearsal"

// pendingKey is inForce's value while the seed configuration is awaited.
const pendingKey = "\x00awaited"

// inForce is the seed configuration in force as a comparable value.
func inForce(s *provider.Seeded) string {
	raw, err := s.InForce()
	if err != nil {
		return pendingKey
	}
	return string(raw)
}

// changed asks the BackupBuckets and BackupEntries of the provider's type and of the classes
// the controllers serve to reconcile (gardener's operation annotation) when the configuration in
// force is no longer before (an inForce value): gardener requeues neither after a success, and
// both read the configuration (an entry: its credentials, freshness and deletion settings).
func (a *actuator) changed(ctx context.Context, log logr.Logger, before string) error {
	if inForce(a.seeded) == before {
		return nil
	}
	if a.rehearsal {
		log.Info("Seed configuration changed; a rehearsal asks no BackupBucket or BackupEntry to reconcile (they are the incumbent's), its next pass plans with it")
		return nil
	}
	classes := a.bucketClasses
	if len(classes) == 0 || slices.Equal(classes, []extensionsv1alpha1.ExtensionClass{""}) {
		classes = []extensionsv1alpha1.ExtensionClass{extensionsv1alpha1.ExtensionClassShoot}
	}
	ours := func(spec extensionsv1alpha1.DefaultSpec, deleting *metav1.Time) bool {
		return spec.Type == a.seeded.Type() && deleting == nil && slices.Contains(classes, extensionsv1alpha1helper.GetExtensionClassOrDefault(spec.Class))
	}
	type object struct {
		kind string
		obj  client.Object
	}
	var objects []object
	buckets := &extensionsv1alpha1.BackupBucketList{}
	if err := a.client.List(ctx, buckets); err != nil {
		return fmt.Errorf("listing the BackupBuckets to reconcile with the new configuration: %w", err)
	}
	for i := range buckets.Items {
		if bb := &buckets.Items[i]; ours(bb.Spec.DefaultSpec, bb.DeletionTimestamp) {
			objects = append(objects, object{"BackupBucket", bb})
		}
	}
	entries := &extensionsv1alpha1.BackupEntryList{}
	if err := a.client.List(ctx, entries); err != nil {
		return fmt.Errorf("listing the BackupEntries to reconcile with the new configuration: %w", err)
	}
	for i := range entries.Items {
		if be := &entries.Items[i]; ours(be.Spec.DefaultSpec, be.DeletionTimestamp) {
			objects = append(objects, object{"BackupEntry", be})
		}
	}
	var errs []error
	for _, each := range objects {
		kind, o := each.kind, each.obj
		patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
		annotations := o.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[v1beta1constants.GardenerOperation] = v1beta1constants.GardenerOperationReconcile
		o.SetAnnotations(annotations)
		if err := a.client.Patch(ctx, o, patch); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("asking %s %s to reconcile with the new configuration: %w", kind, o.GetName(), err))
			continue
		}
		log.Info("Asked to reconcile with the new seed configuration", "kind", kind, "name", o.GetName())
	}
	return errors.Join(errs...)
}

// Delete ends the seed configuration: the Seed no longer declares it (or the seed goes), and the
// defaults are in force.
func (a *actuator) Delete(ctx context.Context, log logr.Logger, ex *extensionsv1alpha1.Extension) error {
	if ex.Namespace != Namespace {
		return nil
	}
	before := inForce(a.seeded)
	if err := a.seeded.Apply(nil, configAt); err != nil {
		return fmt.Errorf("the landscape's defaults: %w", err) // decoded at the start: never
	}
	log.Info("Seed configuration removed; the defaults are in force")
	return a.changed(ctx, log, before)
}

// ForceDelete is Delete.
func (a *actuator) ForceDelete(ctx context.Context, log logr.Logger, ex *extensionsv1alpha1.Extension) error {
	return a.Delete(ctx, log, ex)
}

// Restore is Reconcile: a seed's Extension is not migrated.
func (a *actuator) Restore(ctx context.Context, log logr.Logger, ex *extensionsv1alpha1.Extension) error {
	return a.Reconcile(ctx, log, ex)
}

// Migrate does nothing: a seed's Extension is not migrated, and the configuration stays in force.
func (a *actuator) Migrate(context.Context, logr.Logger, *extensionsv1alpha1.Extension) error {
	return nil
}

func rawOf(ext *runtime.RawExtension) []byte {
	if ext == nil || decode.Empty(ext.Raw) {
		return nil
	}
	return ext.Raw
}
