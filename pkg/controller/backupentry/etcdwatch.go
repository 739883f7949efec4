// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"

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

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/etcdwatch"
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
// whose bucket it does not name (namesAnotherBucket): a roll the extension did not see while it
// was down; in the steady state the Etcds name their entries' buckets and nothing is enqueued.
func etcdEvents(reader client.Reader, typeAndClass []predicate.Predicate) handler.EventHandler {
	return etcdwatch.Events(reader, typeAndClass, namesAnotherBucket)
}

// namesAnotherBucket is etcdEvents' etcdwatch.AtStart: the Etcd's container is not be's bucket.
func namesAnotherBucket(_ context.Context, container string, be *extensionsv1alpha1.BackupEntry) bool {
	return be.Spec.BucketName != container
}
