// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"fmt"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	"github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/gardener/gardener/pkg/controllerutils"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/etcdwatch"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
)

// addController is gardener's backupentry.Add (its add, extensions/pkg/controller/backupentry,
// gardener v1.150.0) with one more watch: the shoots' Etcds (etcdEvents), so that the entry whose
// Etcd gardenlet rolled onto another bucket gets that bucket's credentials in etcd-backup within
// seconds (the two-phase switch, connect.DecideEtcdBackup), not at the shoot's next reconcile.
func addController(mgr manager.Manager, args backupentry.AddArgs) error {
	if args.ControllerOptions.ReconciliationTimeout == 0 {
		args.ControllerOptions.ReconciliationTimeout = controllerutils.DefaultReconciliationTimeout
	}
	if err := etcdwatch.IndexEntries(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	typeAndClass := predicateutils.AddTypeAndClassPredicates(nil, args.ExtensionClasses, args.Type)
	predicates := predicateutils.AddTypeAndClassPredicates(args.Predicates, args.ExtensionClasses, args.Type)
	c, err := builder.
		ControllerManagedBy(mgr).
		Named(backupentry.ControllerName).
		WithOptions(args.ControllerOptions).
		Watches(&extensionsv1alpha1.BackupEntry{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(predicates...)).
		Watches(&druidcorev1alpha1.Etcd{}, etcdEvents(mgr.GetClient(), typeAndClass)).
		Build(backupentry.NewReconciler(mgr, args.Actuator))
	if err != nil {
		return err
	}
	if !args.IgnoreOperationAnnotation {
		return nil
	}
	if err := c.Watch(source.Kind[client.Object](mgr.GetCache(), &corev1.Namespace{},
		handler.EnqueueRequestsFromMapFunc(backupentry.NamespaceToBackupEntryMapper(mgr.GetClient(), predicates)))); err != nil {
		return err
	}
	return c.Watch(source.Kind[client.Object](mgr.GetCache(), &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "Secret", APIVersion: "v1"}},
		handler.EnqueueRequestsFromMapFunc(backupentry.SecretToBackupEntryMapper(mgr.GetClient(), predicates))))
}

// etcdEvents enqueues the live entries of the shoot whose Etcd gardenlet rolled onto another
// bucket (etcdwatch.Events). An Etcd seen at the start (a create event) enqueues only the entries
// that may have missed a roll while the extension was down (rollMissed); in the steady state
// nothing is enqueued.
func etcdEvents(reader client.Reader, typeAndClass []predicate.Predicate) handler.EventHandler {
	return etcdwatch.Events(reader, typeAndClass, rollMissed)
}

// rollMissed is etcdEvents' etcdwatch.AtStart, decided on the cached entry alone (no request;
// table-tested): an entry needs its reconcile when the Etcd names another bucket than the one its
// last successful pass decided etcd-backup for (entryinfo.ProviderStatus.EtcdContainer; without
// that record, the entry's own bucket). After a move every Etcd names the copy bucket, and the
// entries whose etcd-backup was decided for it are not reconciled again; an Etcd rolled back onto
// the entry's bucket while no replica watched is.
func rollMissed(_ context.Context, container string, be *extensionsv1alpha1.BackupEntry) bool {
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil {
		return true
	}
	decidedFor := ps.EtcdContainer
	if decidedFor == "" {
		decidedFor = be.Spec.BucketName
	}
	return container != decidedFor
}

// etcdDecided is the Etcd container one reconcile or restore pass decided etcd-backup for
// (connect.DecideEtcdBackup): decided once the decision is made; container "" when it did not
// read the Etcd (no copy declared, or no Etcd).
type etcdDecided struct {
	decided   bool
	container string
}

// recordEtcdDecided records, after a successful pass, the Etcd container it decided etcd-backup
// for in be's status.providerStatus (entryinfo.ProviderStatus.EtcdContainer): etcd-backup holds
// that decision now. Every successful pass that decides it rewrites it; it goes with the entry.
func (a *holdingActuator) recordEtcdDecided(ctx context.Context, be *extensionsv1alpha1.BackupEntry, etcd *etcdDecided) error {
	if !etcd.decided {
		return nil
	}
	err := extstatus.Patch(ctx, a.client, a.reader, be, func(be *extensionsv1alpha1.BackupEntry) bool {
		if ps, err := entryinfo.ReadProviderStatus(be); err == nil && ps.EtcdContainer == etcd.container {
			return false
		}
		entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { ps.EtcdContainer = etcd.container })
		return true
	})
	if err != nil {
		return fmt.Errorf("recording the Etcd container etcd-backup was decided for: %w", err)
	}
	return nil
}
