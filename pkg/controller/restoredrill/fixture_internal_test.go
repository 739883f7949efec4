// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"
	"github.com/prometheus/client_golang/prometheus/testutil"
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
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

const (
	entryName = "shoot--p--s--uid1"
	bucket    = "bucket"
	interval  = 24 * time.Hour
)

var created = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// fixture is one entry with its store, a fake API server and clock, and a reconciler whose
// restores are restore (by default: restored, at the chain's last revision, after checking that
// the fetched files are in the scratch directory).
type fixture struct {
	t        *testing.T
	client   client.Client
	clock    *clocktesting.FakeClock
	recorder *events.FakeRecorder
	mem      *memstore.Store
	faults   *memstore.Faults
	scratch  string
	r        *Reconciler
	restores atomic.Int32
	restore  Restorer
	unix     int64
}

func newFixture(t *testing.T, objs ...client.Object) *fixture {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = extensionsv1alpha1.AddToScheme(scheme)
	_ = operatorv1alpha1.AddToScheme(scheme)
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: entryName, UID: "uid1", CreationTimestamp: metav1.NewTime(created)},
		Spec:       extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, BucketName: bucket, SecretRef: controllertest.SecretRef},
		Status: extensionsv1alpha1.BackupEntryStatus{DefaultStatus: extensionsv1alpha1.DefaultStatus{
			LastOperation: &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateSucceeded},
		}},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, Data: map[string][]byte{"key": []byte("k")}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(objs, be, secret)...).WithStatusSubresource(be).Build()
	mem := controllertest.Bucket(t, bucket)
	f := &fixture{t: t, client: c, clock: clocktesting.NewFakeClock(created), recorder: events.NewFakeRecorder(50), mem: mem, faults: memstore.WithFaults(mem), scratch: t.TempDir(), unix: created.Unix()}
	f.restore = f.restored
	p := provider.Register(controllertest.Provider{Store: f.faults})
	f.r = NewReconciler(Deps{
		Deps:      periodic.Deps{Provider: p, Client: c, Reader: c, Recorder: f.recorder, Clock: f.clock},
		Options:   Options{Interval: interval, Concurrency: 1, ScratchDir: f.scratch},
		SourceFor: StoreSource(c, p),
		Restore: func(ctx context.Context, ch drill.Chain, dir string, deltas *os.File) drill.Result {
			f.restores.Add(1)
			return f.restore(ctx, ch, dir, deltas)
		},
		Slots: make(chan struct{}, 1),
	})
	metrics.ForgetDrills(entryName)
	t.Cleanup(func() { metrics.ForgetDrills(entryName) })
	return f
}

// restored is a restore that succeeds, once it has seen the full snapshot where it belongs and
// every delta on the stream; a stream that ends early (the download failed) fails it with no
// finding, as drill.RestoreStream does.
func (f *fixture) restored(_ context.Context, ch drill.Chain, dir string, deltas *os.File) drill.Result {
	if _, err := os.Stat(filepath.Join(dir, "full.db")); err != nil {
		f.t.Errorf("restore of %s: %v", ch.Etcd, err)
	}
	for i := range ch.Deltas {
		var hdr [8]byte
		if _, err := io.ReadFull(deltas, hdr[:]); err != nil {
			return drill.Result{Etcd: ch.Etcd, Err: fmt.Errorf("delta %d did not arrive: %w", i, err)}
		}
		if _, err := io.CopyN(io.Discard, deltas, int64(binary.BigEndian.Uint64(hdr[:]))); err != nil {
			return drill.Result{Etcd: ch.Etcd, Err: fmt.Errorf("delta %d did not arrive: %w", i, err)}
		}
	}
	if !strings.HasPrefix(dir, f.scratch) {
		f.t.Errorf("restore in %s, outside the scratch directory %s", dir, f.scratch)
	}
	time.Sleep(time.Millisecond) // a restore takes time
	return drill.Result{Etcd: ch.Etcd, Full: ch.Full.Key, Deltas: len(ch.Deltas), Revision: ch.LastRevision(), Keys: 42}
}

// withHash is data with its SHA-256 appended, as etcd-backup-restore stores snapshots.
func withHash(data []byte) []byte {
	sum := sha256.Sum256(data)
	return append(bytes.Clone(data), sum[:]...)
}

// put stores a snapshot of etcd: a full snapshot (start 0) is 512 bytes of database and its hash,
// a delta an empty JSON array and its hash. It returns the key.
func (f *fixture) put(etcd, kind string, start, last int64) string {
	f.t.Helper()
	f.unix += 10
	key := fmt.Sprintf("%s/%s/v2/%s-%08d-%08d-%d", entryName, etcd, kind, start, last, f.unix)
	data := withHash([]byte("[]"))
	if kind == drill.KindFull {
		data = withHash(make([]byte, 512))
	}
	f.putRaw(key, data)
	return key
}

func (f *fixture) putRaw(key string, data []byte) {
	f.t.Helper()
	if err := f.mem.PutObject(context.Background(), bucket, key, data); err != nil {
		f.t.Fatal(err)
	}
}

// chain stores a full snapshot up to revision 10 and deltas 11-20, 21-30, 31-40 of etcd; it
// returns their keys, full first.
func (f *fixture) chain(etcd string) []string {
	keys := []string{f.put(etcd, drill.KindFull, 0, 10)}
	for i := int64(1); i <= 3; i++ {
		keys = append(keys, f.put(etcd, drill.KindDelta, i*10+1, i*10+10))
	}
	return keys
}

type outcome struct {
	cond    *gardencorev1beta1.Condition
	drill   *drill.Status
	requeue time.Duration
	be      *extensionsv1alpha1.BackupEntry
}

// reconcile reconciles the entry and checks what must hold after every reconcile: the scratch
// directory is empty and the store holds what it held before.
func (f *fixture) reconcile() outcome {
	f.t.Helper()
	before := f.listing()
	res, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: entryName}})
	if err != nil {
		f.t.Fatalf("reconcile: %v", err)
	}
	if left, err := os.ReadDir(f.scratch); err != nil || len(left) != 0 {
		f.t.Errorf("scratch directory not cleaned: %v %v", left, err)
	}
	if after := f.listing(); after != before {
		f.t.Errorf("the drill changed the store:\nbefore %s\nafter  %s", before, after)
	}
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Name: entryName}, be); err != nil {
		f.t.Fatal(err)
	}
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil {
		f.t.Fatal(err)
	}
	return outcome{cond: v1beta1helper.GetCondition(be.Status.Conditions, ConditionBackupsRestorable), drill: ps.Drill, requeue: res.RequeueAfter, be: be}
}

func (f *fixture) listing() string {
	var b strings.Builder
	if err := f.mem.ListObjects(context.Background(), bucket, "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			fmt.Fprintf(&b, "%s %s %d %t;", o.Key, o.Version, o.Size, o.Noncurrent)
		}
		return nil
	}); err != nil {
		f.t.Fatal(err)
	}
	return b.String()
}

// toFirstDrill reconciles an entry never drilled, checks that it waits for its slot with
// BackupsRestorable Unknown/NotDrilledYet and no restore, and moves the clock past the slot.
func (f *fixture) toFirstDrill() {
	f.t.Helper()
	o := f.reconcile()
	if o.cond == nil || o.cond.Status != gardencorev1beta1.ConditionUnknown || o.cond.Reason != ReasonNotDrilledYet || o.drill != nil || f.restores.Load() != 0 {
		f.t.Fatalf("before its slot: %+v, %+v, %d restores", o.cond, o.drill, f.restores.Load())
	}
	if o.requeue <= 0 || o.requeue > interval {
		f.t.Fatalf("first drill in %s, want within %s", o.requeue, interval)
	}
	f.clock.Step(o.requeue + time.Second)
}

// events drains the recorder's events.
func (f *fixture) events() []string {
	var out []string
	for len(f.recorder.Events) > 0 {
		out = append(out, <-f.recorder.Events)
	}
	return out
}

// entry is another entry of the fake API server, reconciled successfully.
func entry(name string) *extensionsv1alpha1.BackupEntry {
	return &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(created)},
		Spec:       extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, BucketName: bucket, SecretRef: controllertest.SecretRef},
		Status: extensionsv1alpha1.BackupEntryStatus{DefaultStatus: extensionsv1alpha1.DefaultStatus{
			LastOperation: &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateSucceeded},
		}},
	}
}

// putFor stores a full snapshot and one delta of etcd-main under another entry's prefix.
func (f *fixture) putFor(name string) {
	f.t.Helper()
	f.putRaw(fmt.Sprintf("%s/etcd-main/v2/Full-00000000-00000010-%d", name, created.Unix()), withHash(make([]byte, 512)))
	f.putRaw(fmt.Sprintf("%s/etcd-main/v2/Incr-00000011-00000020-%d", name, created.Unix()+10), withHash([]byte("[]")))
}

// cluster is the seed's Cluster of the fixture's shoot.
func cluster(hibernated bool) *extensionsv1alpha1.Cluster {
	shoot := fmt.Sprintf(`{"spec":{"hibernation":{"enabled":%t}},"status":{"isHibernated":%t}}`, hibernated, hibernated)
	return &extensionsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--s"}, Spec: extensionsv1alpha1.ClusterSpec{
		CloudProfile: runtime.RawExtension{Raw: []byte(`{}`)}, Shoot: runtime.RawExtension{Raw: []byte(shoot)}}}
}

func readPS(t *testing.T, be *extensionsv1alpha1.BackupEntry) entryinfo.ProviderStatus {
	t.Helper()
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// inventoryStatus is be with an inventory added to its providerStatus, as the inventory's
// controller writes it (written here as JSON, not with MergeProviderStatus, which is under test).
func inventoryStatus(t *testing.T, be *extensionsv1alpha1.BackupEntry) *extensionsv1alpha1.BackupEntry {
	t.Helper()
	be = be.DeepCopy()
	m := map[string]any{}
	if err := json.Unmarshal(be.Status.ProviderStatus.Raw, &m); err != nil {
		t.Fatal(err)
	}
	m["inventory"] = inventory.Inventory{Objects: 4, Bucket: bucket}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	be.Status.ProviderStatus = &runtime.RawExtension{Raw: raw}
	return be
}

func objKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

func objVersions(keys ...string) []objectstore.ObjectVersion {
	out := make([]objectstore.ObjectVersion, 0, len(keys))
	for _, k := range keys {
		out = append(out, objectstore.ObjectVersion{Key: k})
	}
	return out
}

// testValue is entry_restorable of the fixture's entry's own bucket and etcd-main (-1: absent).
func testValue(t *testing.T) float64 {
	t.Helper()
	if !has(metrics.Restorable, "etcd-main") {
		return -1
	}
	return testutil.ToFloat64(metrics.Restorable.WithLabelValues(entryName, "etcd-main", metrics.StorePrimary))
}
