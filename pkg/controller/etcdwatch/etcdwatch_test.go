// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package etcdwatch_test

import (
	"context"
	"slices"
	"testing"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/etcdwatch"
)

func etcd(container *string, generation int64) *druidcorev1alpha1.Etcd {
	e := &druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--s", Name: "etcd-main", Generation: generation}}
	if container != nil {
		e.Spec.Backup.Store = &druidcorev1alpha1.StoreSpec{Container: container}
	}
	return e
}

// TestRolled: only a change of the backup store's container (or a store set or removed) counts;
// any other change of an Etcd, which the cache keeps as its metadata alone, does not.
func TestRolled(t *testing.T) {
	bucket, copyBucket := new("bucket"), new("bucket-copy")
	for _, c := range []struct {
		name     string
		old, new client.Object
		want     bool
	}{
		{"rolled onto the copy", etcd(bucket, 1), etcd(copyBucket, 2), true},
		{"rolled back onto the primary", etcd(copyBucket, 2), etcd(bucket, 3), true},
		{"a store set", etcd(nil, 1), etcd(bucket, 2), true},
		{"the store removed", etcd(bucket, 1), etcd(nil, 2), true},
		{"another change (a generation)", etcd(bucket, 1), etcd(bucket, 2), false},
		{"a resync, nothing changed", etcd(bucket, 1), etcd(bucket, 1), false},
		{"no store before or after", etcd(nil, 1), etcd(nil, 2), false},
		{"an empty container set", etcd(nil, 1), etcd(new(""), 2), true},
		{"not an Etcd", &extensionsv1alpha1.BackupEntry{}, &extensionsv1alpha1.BackupEntry{}, false},
	} {
		if got := etcdwatch.Rolled(c.old, c.new); got != c.want {
			t.Errorf("%s: Rolled %v; want %v", c.name, got, c.want)
		}
	}
}

// entry is a BackupEntry of type "mem" on bucket "bucket"; its name says its shoot (entryinfo).
func entry(name string) *extensionsv1alpha1.BackupEntry {
	return &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, BucketName: "bucket"}}
}

// entries is a cache holding objs, indexed by etcdwatch.Index.
func entries(objs ...client.Object) client.Reader {
	scheme := runtime.NewScheme()
	_ = extensionsv1alpha1.AddToScheme(scheme)
	_ = druidcorev1alpha1.AddToScheme(scheme)
	return fake.NewClientBuilder().WithScheme(scheme).WithIndex(&extensionsv1alpha1.BackupEntry{}, etcdwatch.Index, etcdwatch.EntryNamespace).
		WithObjects(objs...).Build()
}

// TestEventsWithoutAtStart: the entry copy's mapping (no AtStart) wakes the shoot's live entries
// of its type and class (not a migration's source-, not another shoot's) on a roll alone: an Etcd seen at the start (the cache's initial list) or changed otherwise wakes
// nothing, so their looks keep their schedule.
func TestEventsWithoutAtStart(t *testing.T) {
	otherType, otherClass := entry("shoot--p--s--other-type"), entry("shoot--p--s--other-class")
	otherType.Spec.Type = "other"
	otherClass.Spec.Class = new(extensionsv1alpha1.ExtensionClass("seed"))
	c := entries(entry("shoot--p--s--uid"), entry("source-shoot--p--s--uid"), entry("shoot--p--t--uid"), otherType, otherClass)
	h := etcdwatch.Events(c, predicateutils.AddTypeAndClassPredicates(nil, nil, "mem"), nil)
	ctx := context.Background()
	update := func(from, to *druidcorev1alpha1.Etcd) []string {
		return controllertest.Queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: from, ObjectNew: to}, q)
		})
	}
	bucket, copyBucket := new("bucket"), new("bucket-copy")
	for name, c := range map[string]struct{ got, want []string }{
		"rolled onto the primary": {update(etcd(copyBucket, 1), etcd(bucket, 2)), []string{"shoot--p--s--uid"}},
		"another change":          {update(etcd(bucket, 1), etcd(bucket, 2)), nil},
		"seen at the start, on another bucket": {controllertest.Queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(ctx, event.CreateEvent{Object: etcd(copyBucket, 1)}, q)
		}), nil},
		"deleted": {controllertest.Queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Delete(ctx, event.DeleteEvent{Object: etcd(bucket, 1)}, q)
		}), nil},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: enqueued %v; want %v", name, c.got, c.want)
		}
	}
}

// slowSync is a cache whose BackupEntry informer syncs only after any bound a List carries short
// of its watch's context (a seed with thousands of large entries): a List with a deadline fails at
// it, as the cache's does (its informers' Get), one without one gets the entries.
type slowSync struct{ client.Reader }

func (r slowSync) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, bounded := ctx.Deadline(); bounded {
		<-ctx.Done()
		return apierrors.NewTimeoutError("failed waiting for *v1alpha1.BackupEntry Informer to sync", 0)
	}
	return r.Reader.List(ctx, list, opts...)
}

// TestEventsWaitForTheEntries: the Etcds' events at the start come before the BackupEntry
// informer has synced; however long that sync takes within the watch's context, the entries of a
// roll missed while the extension was down (AtStart) and of a roll meanwhile are still enqueued.
func TestEventsWaitForTheEntries(t *testing.T) {
	h := etcdwatch.Events(slowSync{entries(entry("shoot--p--s--uid"))}, predicateutils.AddTypeAndClassPredicates(nil, nil, "mem"),
		func(context.Context, string, *extensionsv1alpha1.BackupEntry) bool { return true })
	ctx := context.Background()
	bucket, copyBucket := new("bucket"), new("bucket-copy")
	for name, got := range map[string][]string{
		"seen at the start": controllertest.Queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(ctx, event.CreateEvent{Object: etcd(copyBucket, 1)}, q)
		}),
		"rolled": controllertest.Queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: etcd(bucket, 1), ObjectNew: etcd(copyBucket, 2)}, q)
		}),
	} {
		if want := []string{"shoot--p--s--uid"}; !slices.Equal(got, want) {
			t.Errorf("%s: enqueued %v; want %v", name, got, want)
		}
	}
}

// neverSynced is a cache whose BackupEntry informer never syncs: a List waits until its context
// ends.
type neverSynced struct {
	client.Reader

	listing chan struct{}
}

func (r neverSynced) List(ctx context.Context, _ client.ObjectList, _ ...client.ListOption) error {
	close(r.listing)
	<-ctx.Done()
	return apierrors.NewTimeoutError("failed waiting for *v1alpha1.BackupEntry Informer to sync", 0)
}

// TestEventsEndWithTheWatch: an event waiting for the entries ends with its watch's context (the
// manager's end, or the controller's sources failing to sync), enqueuing nothing.
func TestEventsEndWithTheWatch(t *testing.T) {
	reader := neverSynced{listing: make(chan struct{})}
	h := etcdwatch.Events(reader, predicateutils.AddTypeAndClassPredicates(nil, nil, "mem"),
		func(context.Context, string, *extensionsv1alpha1.BackupEntry) bool { return true })
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan []string)
	go func() {
		got <- controllertest.Queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(ctx, event.CreateEvent{Object: etcd(new("bucket"), 1)}, q)
		})
	}()
	<-reader.listing
	cancel()
	if names := <-got; names != nil {
		t.Errorf("enqueued %v; want nothing", names)
	}
}
