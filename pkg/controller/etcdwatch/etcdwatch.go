// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package etcdwatch maps the shoots' Etcds onto their BackupEntries, for the controllers that
// follow gardenlet's roll of a shoot's Etcd onto another bucket: the BackupEntry's two-phase
// switch (connect.DecideEtcdBackup) and the entry copy (its final reverse pass, its pause). One
// field index of the entries by their Etcd's namespace (Index), the decision which Etcd events
// count (Rolled), and the mapping of an Etcd onto its shoot's live entries (Events). Etcds are
// only read: the cache holds their backup store alone (app.EtcdStoreOnly).
package etcdwatch

import (
	"context"
	"sync"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
)

// Index is the field index of BackupEntries by the namespace of the Etcd they read
// (EntryNamespace): an Etcd's event lists its shoot's entries alone, not every entry of the seed.
const Index = "backupentry.etcdNamespace"

// EntryNamespace is Index's function: the namespace of obj's shoot's Etcd (entryinfo.EtcdKey);
// none for an entry whose Etcd is not read.
func EntryNamespace(obj client.Object) []string {
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

// indexed holds the field indexers Index is registered on: a cache refuses a second registration
// of one index, and the BackupEntry controller and the entry copy both need it.
var indexed sync.Map

// IndexEntries registers Index on indexer (a manager's GetFieldIndexer), once per indexer.
func IndexEntries(ctx context.Context, indexer client.FieldIndexer) error {
	if _, done := indexed.LoadOrStore(indexer, struct{}{}); done {
		return nil
	}
	if err := indexer.IndexField(ctx, &extensionsv1alpha1.BackupEntry{}, Index, EntryNamespace); err != nil {
		indexed.Delete(indexer)
		return err
	}
	return nil
}

// Rolled is the decision whether an update of an Etcd counts (table-tested): its backup store's
// container changed, or a store was set or removed (gardenlet rolled it onto another bucket). Any
// other change (a generation, a resource version: the cache keeps nothing else of an Etcd) does
// not.
func Rolled(oldObj, newObj client.Object) bool {
	oldContainer, oldFound := storeContainer(oldObj)
	newContainer, newFound := storeContainer(newObj)
	return oldContainer != newContainer || oldFound != newFound
}

// AtStart chooses, for an Etcd seen at the start (a create event: the cache's initial list, or a
// new shoot's Etcd) with the backup store's container, which of its shoot's entries are enqueued.
type AtStart func(ctx context.Context, container string, be *extensionsv1alpha1.BackupEntry) bool

// Events enqueues the live entries (passing typeAndClass, not a migration's source-, not being
// deleted) of the shoot whose Etcd (entryinfo.EtcdKey) was Rolled. An Etcd seen at the start
// with a store enqueues those of its entries atStart chooses (nil: none). A deleted Etcd enqueues
// nothing. reader lists the entries by Index.
func Events(reader client.Reader, typeAndClass []predicate.Predicate, atStart AtStart) handler.EventHandler {
	enqueue := func(ctx context.Context, etcd client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request], chosen func(*extensionsv1alpha1.BackupEntry) bool) {
		for _, be := range entriesOf(ctx, reader, etcd, typeAndClass) {
			if chosen(&be) {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&be)})
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			container, found := storeContainer(e.Object)
			if !found || atStart == nil {
				return
			}
			enqueue(ctx, e.Object, q, func(be *extensionsv1alpha1.BackupEntry) bool { return atStart(ctx, container, be) })
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if !Rolled(e.ObjectOld, e.ObjectNew) {
				return
			}
			enqueue(ctx, e.ObjectNew, q, func(*extensionsv1alpha1.BackupEntry) bool { return true })
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

// entriesOf lists the entries whose shoot's Etcd etcd is (entryinfo.EtcdKey, by Index) and that
// pass typeAndClass, not being deleted (a deletion does not read the Etcd). The List has no bound
// of its own: at the start the Etcds' events come before the BackupEntry informer has synced, a
// cache's List waits for that sync, and on a seed with many entries it can take long; a shorter
// bound would drop those events and with them the start's missed rolls. ctx (the watch's, ended
// with the manager or when the controller's sources fail to sync) bounds it. A failed List is
// logged: the event is lost, the entries keep what they hold until their next reconcile or look.
func entriesOf(ctx context.Context, reader client.Reader, etcd client.Object, typeAndClass []predicate.Predicate) []extensionsv1alpha1.BackupEntry {
	list := &extensionsv1alpha1.BackupEntryList{}
	if err := reader.List(ctx, list, client.MatchingFields{Index: etcd.GetNamespace()}); err != nil {
		log.FromContext(ctx).Error(err, "Listing the BackupEntries of a changed Etcd failed: they are not woken by it", "etcd", client.ObjectKeyFromObject(etcd))
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
