// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	"github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/gardener/gardener/pkg/controllerutils"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
)

// addController is gardener's backupentry.Add (its add, extensions/pkg/controller/backupentry,
// gardener v1.150.0) with one more watch: the shoots' Etcds (etcdEvents), so that the entry whose
// Etcd gardenlet rolled onto another bucket gets that bucket's credentials in etcd-backup within
// seconds (the two-phase switch, connect.DecideEtcdBackup), not at the shoot's next reconcile.
// Etcds are only read: the cache holds their backup store alone (app.NewManager).
func addController(mgr manager.Manager, args backupentry.AddArgs) error {
	if args.ControllerOptions.ReconciliationTimeout == 0 {
		args.ControllerOptions.ReconciliationTimeout = controllerutils.DefaultReconciliationTimeout
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &extensionsv1alpha1.BackupEntry{}, etcdNamespaceIndex, etcdNamespaceOf); err != nil {
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

// etcdEvents enqueues the live entries (of this type and class, not a migration's source-, not
// being deleted) of the shoot whose Etcd (entryinfo.EtcdKey) changed its backup store's
// container: gardenlet rolled it. An Etcd seen at the start (a create event) enqueues only the
// entries whose bucket it does not name: a roll the extension did not see while it was down; in
// the steady state the Etcds name their entries' buckets and nothing is enqueued.
func etcdEvents(reader client.Reader, typeAndClass []predicate.Predicate) handler.EventHandler {
	enqueue := func(ctx context.Context, etcd client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request], unless func(*extensionsv1alpha1.BackupEntry) bool) {
		for _, be := range entriesOf(ctx, reader, etcd, typeAndClass) {
			if unless == nil || !unless(&be) {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&be)})
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			container, found := storeContainer(e.Object)
			if !found {
				return
			}
			enqueue(ctx, e.Object, q, func(be *extensionsv1alpha1.BackupEntry) bool { return be.Spec.BucketName == container })
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			oldContainer, oldFound := storeContainer(e.ObjectOld)
			newContainer, newFound := storeContainer(e.ObjectNew)
			if oldContainer == newContainer && oldFound == newFound {
				return
			}
			enqueue(ctx, e.ObjectNew, q, nil)
		},
	}
}

// storeContainer is obj's spec.backup.store.container when obj is an Etcd with a store.
func storeContainer(obj client.Object) (string, bool) {
	etcd, ok := obj.(*druidcorev1alpha1.Etcd)
	if !ok {
		return "", false
	}
	return entryinfo.StoreContainer(etcd)
}

// etcdNamespaceIndex is the field index of BackupEntries by the namespace of the Etcd they read
// (etcdNamespaceOf): an Etcd's event lists its shoot's entries alone, not every entry of the seed.
const etcdNamespaceIndex = "backupentry.etcdNamespace"

// etcdNamespaceOf is the namespace of obj's shoot's Etcd (entryinfo.EtcdKey); none for an entry
// whose Etcd is not read.
func etcdNamespaceOf(obj client.Object) []string {
	be, ok := obj.(*extensionsv1alpha1.BackupEntry)
	if !ok {
		return nil
	}
	key, read := entryinfo.EtcdKey(be)
	if !read {
		return nil
	}
	return []string{key.Namespace}
}

// entriesOf lists the entries whose shoot's Etcd etcd is (entryinfo.EtcdKey, by
// etcdNamespaceIndex) and that pass typeAndClass, not being deleted (a deletion does not read
// the Etcd). A failed List is logged: the event is lost, the entries keep what they hold until
// their next reconcile.
func entriesOf(ctx context.Context, reader client.Reader, etcd client.Object, typeAndClass []predicate.Predicate) []extensionsv1alpha1.BackupEntry {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	list := &extensionsv1alpha1.BackupEntryList{}
	if err := reader.List(ctx, list, client.MatchingFields{etcdNamespaceIndex: etcd.GetNamespace()}); err != nil {
		log.FromContext(ctx).Error(err, "Listing the BackupEntries of a changed Etcd failed: they are not reconciled for it", "etcd", client.ObjectKeyFromObject(etcd))
		return nil
	}
	var out []extensionsv1alpha1.BackupEntry
	for _, be := range list.Items {
		if be.DeletionTimestamp != nil || !predicateutils.EvalGeneric(&be, typeAndClass...) {
			continue
		}
		if key, ok := entryinfo.EtcdKey(&be); ok && key == client.ObjectKeyFromObject(etcd) {
			out = append(out, be)
		}
	}
	return out
}
