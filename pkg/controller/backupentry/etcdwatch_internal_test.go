// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"slices"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/etcdwatch"
)

// TestEtcdEventsEnqueueTheShootsEntry: a change of an Etcd's backup container enqueues the live
// entries of its shoot (of this type; not a source-, not one being deleted, not another shoot's);
// an Etcd seen at the start enqueues only the entries whose bucket it does not name; a change of
// anything else enqueues nothing.
func TestEtcdEventsEnqueueTheShootsEntry(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = extensionsv1alpha1.AddToScheme(scheme)
	_ = druidcorev1alpha1.AddToScheme(scheme)
	entry := func(name, typ string, deleting bool) *extensionsv1alpha1.BackupEntry {
		be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: typ}, BucketName: "bucket"}}
		if deleting {
			be.DeletionTimestamp, be.Finalizers = &metav1.Time{Time: time.Now()}, []string{"x"}
		}
		return be
	}
	var listedAll []string
	c := fake.NewClientBuilder().WithScheme(scheme).WithIndex(&extensionsv1alpha1.BackupEntry{}, etcdwatch.Index, etcdwatch.EntryNamespace).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if o := (&client.ListOptions{}).ApplyOptions(opts); o.FieldSelector == nil {
				listedAll = append(listedAll, "a List without the index")
			}
			return cl.List(ctx, list, opts...)
		}}).WithObjects(
		entry("shoot--p--s--uid", "mem", false),
		entry("source-shoot--p--s--uid", "mem", false),
		entry("shoot--p--s--old", "mem", true),
		entry("shoot--p--t--uid", "mem", false),
		entry("shoot--p--s--other", "other", false),
	).Build()
	h := etcdEvents(c, predicateutils.AddTypeAndClassPredicates(nil, nil, "mem"))
	etcd := func(container string) *druidcorev1alpha1.Etcd {
		e := &druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--s", Name: "etcd-main"}}
		if container != "" {
			e.Spec.Backup.Store = &druidcorev1alpha1.StoreSpec{Container: new(container)}
		}
		return e
	}
	ctx := context.Background()
	update := func(from, to string) []string {
		return controllertest.Queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: etcd(from), ObjectNew: etcd(to)}, q)
		})
	}
	create := func(container string) []string {
		return controllertest.Queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(ctx, event.CreateEvent{Object: etcd(container)}, q)
		})
	}
	want := []string{"shoot--p--s--uid"}
	for name, c := range map[string]struct{ got, want []string }{
		"rolled onto the copy":                 {update("bucket", "bucket-copy"), want},
		"rolled back onto the primary":         {update("bucket-copy", "bucket"), want},
		"a store set":                          {update("", "bucket"), want},
		"the container unchanged":              {update("bucket", "bucket"), nil},
		"seen at the start, on another bucket": {create("bucket-copy"), want},
		"seen at the start, on its bucket":     {create("bucket"), nil},
		"seen at the start, no store":          {create(""), nil},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: enqueued %v; want %v", name, c.got, c.want)
		}
	}
	if len(listedAll) > 0 {
		t.Errorf("%d events listed every BackupEntry of the seed; want their shoot's alone (etcdwatch.Index)", len(listedAll))
	}
}

// TestRollMissed: an Etcd seen at the start asks for the reconcile of an entry only when it names
// another bucket than the one its etcd-backup was last decided for (without a record: the
// entry's own).
func TestRollMissed(t *testing.T) {
	entry := func(bucket, recorded string, providerStatus string) *extensionsv1alpha1.BackupEntry {
		be := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: bucket}}
		if recorded != "" {
			entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { ps.EtcdContainer = recorded })
		}
		if providerStatus != "" {
			be.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(providerStatus)}
		}
		return be
	}
	for _, c := range []struct {
		name      string
		container string
		be        *extensionsv1alpha1.BackupEntry
		want      bool
	}{
		{"the Etcd names the entry's bucket", "bucket", entry("bucket", "", ""), false},
		{"the Etcd names the entry's bucket, decided for the copy (rolled back unseen)", "bucket", entry("bucket", "bucket-copy", ""), true},
		{"the Etcd names the entry's bucket, decided for it", "bucket", entry("bucket", "bucket", ""), false},
		{"another bucket, nothing recorded (never decided since)", "bucket-copy", entry("bucket", "", ""), true},
		{"another bucket, decided for it (after a move)", "bucket-copy", entry("bucket", "bucket-copy", ""), false},
		{"another bucket, decided for the entry's (a roll missed)", "bucket-copy", entry("bucket", "bucket", ""), true},
		{"another bucket, a providerStatus that does not decode", "bucket-copy", entry("bucket", "", "[1]"), true},
	} {
		if got := rollMissed(context.Background(), c.container, c.be); got != c.want {
			t.Errorf("%s: rollMissed %v; want %v", c.name, got, c.want)
		}
	}
}
