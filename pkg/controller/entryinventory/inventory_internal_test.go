// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinventory

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// backupsFresh is the value of the fixture entry's one entry_backups_fresh series, which must
// carry the entry's bucket (BackupsStale is told apart from the bucket's outage by it).
func backupsFresh(t *testing.T) float64 {
	t.Helper()
	entry := entryName
	ch := make(chan prometheus.Metric, 1000)
	metrics.BackupsFresh.Collect(ch)
	close(ch)
	var values []float64
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["entry"] != entry {
			continue
		}
		if labels["bucket"] != "bucket" {
			t.Errorf("entry_backups_fresh of %s has bucket %q; want its spec.bucketName bucket", entry, labels["bucket"])
		}
		values = append(values, pb.GetGauge().GetValue())
	}
	if len(values) != 1 {
		t.Fatalf("entry_backups_fresh of %s has %d series; want one", entry, len(values))
	}
	return values[0]
}

// countingStore counts listings: each one is an inventory's cost.
type countingStore struct {
	*memstore.Store

	listings atomic.Int32
	fail     atomic.Bool // every listing is refused, as with revoked credentials
}

func (s *countingStore) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	s.listings.Add(1)
	if s.fail.Load() {
		return fmt.Errorf("listing refused: %w", objectstore.ErrUnauthenticated)
	}
	return s.Store.ListObjects(ctx, bucket, prefix, fn)
}

const (
	entryName         = "shoot--p--s--uid1"
	inventoryInterval = 30 * time.Minute
)

type inventoryFixture struct {
	t              *testing.T
	store          *countingStore
	client         client.Client
	clock          *clocktesting.FakeClock
	recorder       *events.FakeRecorder
	inventoryTaker *inventoryTaker
}

var created = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func newInventoryFixture(t *testing.T, name string, objs ...client.Object) *inventoryFixture {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = extensionsv1alpha1.AddToScheme(scheme)
	_ = druidcorev1alpha1.AddToScheme(scheme)
	_ = operatorv1alpha1.AddToScheme(scheme)
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec:       extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, BucketName: "bucket", SecretRef: controllertest.SecretRef},
		Status: extensionsv1alpha1.BackupEntryStatus{DefaultStatus: extensionsv1alpha1.DefaultStatus{
			LastOperation: &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateSucceeded},
		}},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, Data: map[string][]byte{"key": []byte("k")}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(objs, be, secret)...).WithStatusSubresource(be).Build()
	mem := controllertest.Bucket(t, "bucket")
	store := &countingStore{Store: mem}
	f := &inventoryFixture{t: t, store: store, client: c, clock: clocktesting.NewFakeClock(created), recorder: events.NewFakeRecorder(20)}
	f.inventoryTaker = &inventoryTaker{Deps: periodic.Deps{Provider: provider.Register(controllertest.Provider{Store: store}), Reader: c, Client: c, Recorder: f.recorder,
		Clock: f.clock}, opts: Options{Interval: inventoryInterval, Thresholds: inventory.DefaultThresholds}}
	metrics.ForgetEntry(name)
	t.Cleanup(func() { metrics.ForgetEntry(name) }) // the tests count every entry's series
	return f
}

// cluster is the Cluster of the entries of these tests (shoot--p--s).
func cluster(hibernated bool) *extensionsv1alpha1.Cluster {
	const name = "shoot--p--s"
	shoot := fmt.Sprintf(`{"spec":{"hibernation":{"enabled":%t}},"status":{"isHibernated":%t}}`, hibernated, hibernated)
	return &extensionsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: extensionsv1alpha1.ClusterSpec{
		CloudProfile: runtime.RawExtension{Raw: []byte(`{}`)}, Shoot: runtime.RawExtension{Raw: []byte(shoot)}}}
}

// snapshot writes a snapshot named as etcd-backup-restore names it, taken at t.
func (f *inventoryFixture) snapshot(kind string, t time.Time) string {
	f.t.Helper()
	key := fmt.Sprintf("%s/etcd-main/v2/%s-%08d-%08d-%d", entryName, kind, 1, 2, t.Unix())
	if err := f.store.PutObject(context.Background(), "bucket", key, []byte("snapshot")); err != nil {
		f.t.Fatal(err)
	}
	return key
}

func (f *inventoryFixture) reconcile(name string) (*gardencorev1beta1.Condition, entryinfo.ProviderStatus, time.Duration) {
	f.t.Helper()
	res, err := f.inventoryTaker.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
	if err != nil {
		f.t.Fatalf("reconcile: %v", err)
	}
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Name: name}, be); err != nil {
		f.t.Fatal(err)
	}
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil {
		f.t.Fatal(err)
	}
	return v1beta1helper.GetCondition(be.Status.Conditions, ConditionBackupsFresh), ps, res.RequeueAfter
}

// toFirstCount reconciles an entry that was never counted, checks that this lists and publishes
// nothing but waits for the entry's slot in the interval, and moves the clock there.
func (f *inventoryFixture) toFirstCount() {
	name := entryName
	f.t.Helper()
	listings := f.store.listings.Load()
	cond, ps, requeue := f.reconcile(name)
	if cond != nil || ps.Inventory != nil || f.store.listings.Load() != listings {
		f.t.Fatalf("an entry never counted was counted before its slot: %+v, %+v", cond, ps.Inventory)
	}
	if requeue <= 0 || requeue > inventoryInterval {
		f.t.Fatalf("first count in %s; want within the interval %s", requeue, inventoryInterval)
	}
	// The wake-up comes late, as a work queue's do: the slot has passed, and it counts.
	f.clock.Step(requeue + 2*time.Second)
}

func TestFreshEntryTurnsStaleWhenTheClockPassesTheThreshold(t *testing.T) {
	f := newInventoryFixture(t, entryName, cluster(false))

	// A new entry without snapshots: not judged yet.
	f.toFirstCount()
	cond, ps, _ := f.reconcile(entryName)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || ps.Inventory == nil {
		t.Fatalf("new entry: %+v, inventory %+v", cond, ps.Inventory)
	}

	// etcd-backup-restore takes a full and a delta snapshot; the next inventory is due.
	// The next count comes 35m after the first: past its due time whatever the first count's
	// jitter (at most a tenth of the interval) made it.
	t0 := f.clock.Now()
	full := f.snapshot("Full", t0)
	f.clock.Step(time.Minute)
	delta := f.snapshot("Incr", f.clock.Now())
	f.clock.Step(34 * time.Minute)
	cond, ps, requeue := f.reconcile(entryName)
	if cond.Status != gardencorev1beta1.ConditionTrue || ps.Inventory.Objects != 2 || ps.Inventory.Etcds[0].LatestFull.Key != full || ps.Inventory.Etcds[0].LatestDelta.Key != delta {
		t.Fatalf("with fresh snapshots: %+v, inventory %+v", cond, ps.Inventory)
	}
	if got := backupsFresh(t); got != 1 {
		t.Errorf("entry_backups_fresh = %v", got)
	}
	if got := testutil.ToFloat64(metrics.LatestSnapshot.WithLabelValues(entryName, "etcd-main", metrics.SnapshotDelta)); got != float64(t0.Add(time.Minute).Unix()) {
		t.Errorf("latest delta snapshot metric = %v", got)
	}
	// The delta is 34m old: it turns stale in 26m, before the next inventory is due (in 30m plus
	// up to 3m of jitter), so that is when the entry is looked at next.
	if requeue != 26*time.Minute+time.Second {
		t.Errorf("requeue after %s, want when the delta passes 1h", requeue)
	}
	listings := f.store.listings.Load()

	// Half way to the next inventory and not yet stale: no listing.
	f.clock.Step(15 * time.Minute)
	if cond, _, _ = f.reconcile(entryName); cond.Status != gardencorev1beta1.ConditionTrue || f.store.listings.Load() != listings {
		t.Fatalf("before due: %+v, %d listings (had %d)", cond, f.store.listings.Load(), listings)
	}

	// The clock passes the delta threshold and etcd-backup-restore wrote nothing: a new listing
	// confirms it before the condition turns False.
	f.clock.Step(16 * time.Minute)
	cond, _, _ = f.reconcile(entryName)
	if cond.Status != gardencorev1beta1.ConditionFalse || cond.Reason != "Stale" || !strings.Contains(cond.Message, "etcd-main") {
		t.Fatalf("past the threshold: %+v", cond)
	}
	if f.store.listings.Load() != listings+1 {
		t.Errorf("the stale verdict was not confirmed by a listing (%d listings, had %d)", f.store.listings.Load(), listings)
	}
	if got := backupsFresh(t); got != 0 {
		t.Errorf("entry_backups_fresh = %v", got)
	}
	var stale bool
	for len(f.recorder.Events) > 0 {
		stale = stale || strings.Contains(<-f.recorder.Events, "Warning BackupsStale")
	}
	if !stale {
		t.Error("no BackupsStale event")
	}

	// A new delta snapshot: fresh again at the next look.
	f.clock.Step(2 * time.Minute)
	f.snapshot("Incr", f.clock.Now())
	if cond, _, _ = f.reconcile(entryName); cond.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("after a new delta snapshot: %+v", cond)
	}
}

func TestStaleSnapshotsOfAShootThatTakesNoneAreNotAFailure(t *testing.T) {
	cases := []struct {
		name    string
		cluster client.Object
		reason  string
	}{
		{"hibernated", cluster(true), entryinfo.ReasonShootHibernated},
		{"shoot gone", nil, entryinfo.ReasonShootGone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var objs []client.Object
			if c.cluster != nil {
				objs = append(objs, c.cluster)
			}
			f := newInventoryFixture(t, entryName, objs...)
			f.snapshot("Full", f.clock.Now())
			// Its slot passed long ago: counted at once.
			f.clock.Step(26 * time.Hour)
			cond, _, _ := f.reconcile(entryName)
			if cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != c.reason {
				t.Fatalf("condition %+v, want Unknown/%s", cond, c.reason)
			}
			if testutil.CollectAndCount(metrics.BackupsFresh) != 0 {
				t.Error("entry_backups_fresh is set while the verdict is Unknown")
			}
		})
	}
}

func TestSourceEntriesAreNotCounted(t *testing.T) {
	f := newInventoryFixture(t, "source-"+entryName)
	cond, ps, _ := f.reconcile("source-" + entryName)
	if cond != nil || ps.Inventory != nil || f.store.listings.Load() != 0 {
		t.Fatalf("a migration's source entry was counted: %+v %+v", cond, ps.Inventory)
	}
}

func TestAFailingInventoryKeepsWhatTheLastOneSays(t *testing.T) {
	f := newInventoryFixture(t, entryName, cluster(false))
	f.toFirstCount()
	f.snapshot("Full", f.clock.Now())
	if cond, _, _ := f.reconcile(entryName); cond.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("first inventory: %+v", cond)
	}
	f.store.fail.Store(true)

	f.clock.Step(inventoryInterval + time.Minute)
	cond, ps, requeue := f.reconcile(entryName)
	if cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != ReasonInventoryFailed || !strings.Contains(cond.Message, "listing refused") {
		t.Fatalf("failing listing: %+v", cond)
	}
	if requeue != minRecount || ps.Inventory == nil {
		t.Errorf("requeue %s (want %s), inventory kept: %v", requeue, minRecount, ps.Inventory != nil)
	}
	// The last inventory's snapshot is 31m old: still fresh by it.
	if got := backupsFresh(t); got != 1 {
		t.Errorf("entry_backups_fresh = %v while the last inventory is fresh", got)
	}
	// Later the last inventory's snapshot is past the delta threshold: the metric says so, so an
	// alert on stale backups does not clear because the listing fails too.
	f.clock.Step(time.Hour)
	if cond, _, _ = f.reconcile(entryName); cond.Reason != ReasonInventoryFailed {
		t.Fatalf("still failing: %+v", cond)
	}
	if got := backupsFresh(t); got != 0 {
		t.Errorf("entry_backups_fresh = %v, want 0: the newest snapshot known is over 1h old", got)
	}
}
