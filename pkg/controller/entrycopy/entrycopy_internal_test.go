// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// copyRig is a copier of the entry name in bucket "bucket" of store, with copy cfg, on a fake
// client holding the entry and its secret; pass runs one due pass and returns BackupsCopied; wake
// runs a look at once, the clock not moved (woken by an event, e.g. the shoot's Etcd), and
// returns BackupsCopied.
type copyRig struct {
	c    client.Client
	name string
	pass func() *gardencorev1beta1.Condition
	wake func() *gardencorev1beta1.Condition
	cp   *copier
	// clock is the copier's: wake does not move it, pass steps it past the interval.
	clock *clocktesting.FakeClock
}

// setConfig sets the entry's providerConfig to cfg.
func (r copyRig) setConfig(t *testing.T, cfg controllertest.Config) {
	t.Helper()
	be := &extensionsv1alpha1.BackupEntry{}
	if err := r.c.Get(context.Background(), client.ObjectKey{Name: r.name}, be); err != nil {
		t.Fatal(err)
	}
	be.Spec.ProviderConfig = controllertest.RawConfig(cfg)
	if err := r.c.Update(context.Background(), be); err != nil {
		t.Fatal(err)
	}
}

func newCopyRig(t *testing.T, store controllertest.Store, name string, cfg controllertest.Config, now time.Time) copyRig {
	t.Helper()
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = extensionsv1alpha1.AddToScheme(scheme)
	_ = druidcorev1alpha1.AddToScheme(scheme)
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem", ProviderConfig: controllertest.RawConfig(cfg)},
			BucketName: "bucket", SecretRef: controllertest.SecretRef},
		Status: extensionsv1alpha1.BackupEntryStatus{DefaultStatus: extensionsv1alpha1.DefaultStatus{
			LastOperation: &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateSucceeded}}},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, Data: map[string][]byte{"key": []byte("k")}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(be, secret).WithStatusSubresource(be).Build()
	clock := clocktesting.NewFakeClock(now)
	cp := &copier{Deps: periodic.Deps{Provider: provider.Register(controllertest.Provider{Store: store}), Reader: c, Client: c, Recorder: events.NewFakeRecorder(20), Clock: clock, Started: now.Add(-2 * time.Hour)},
		opts: Options{Interval: time.Minute}}
	metrics.ForgetEntryCopy(name)
	t.Cleanup(func() { metrics.ForgetEntryCopy(name) })
	wake := func() *gardencorev1beta1.Condition {
		t.Helper()
		if _, err := cp.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: name}}); err != nil {
			t.Fatal(err)
		}
		got := &extensionsv1alpha1.BackupEntry{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			t.Fatal(err)
		}
		return v1beta1helper.GetCondition(got.Status.Conditions, ConditionBackupsCopied)
	}
	return copyRig{c: c, name: name, cp: cp, wake: wake, clock: clock, pass: func() *gardencorev1beta1.Condition {
		t.Helper()
		clock.Step(2 * time.Minute) // past the entry's slot and its interval
		return wake()
	}}
}

// TestCopyPass: an entry's snapshots are copied to the copy bucket (and nothing else: neither
// a key that is no snapshot nor a neighbour's), BackupsCopied True and the lag metric 0; without
// the copy's credentials the copy store cannot be read: Unknown CopyUnavailable and no lag series.
func TestCopyPass(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	name := "shoot--p--s--1"
	snaps := []string{name + "/etcd-main/v2/Full-00000000-00000010-1764417600", name + "/etcd-main/v2/Incr-00000011-00000020-1764417900"}
	mem := controllertest.Bucket(t, "bucket", append(snaps, name+"/etcd-main/v2/not-a-snapshot", "shoot--p--s--10/etcd-main/v2/Full-00000000-00000010-1764417600")...)
	if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket-copy"}); err != nil {
		t.Fatal(err)
	}
	rig := newCopyRig(t, mem, name, controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy"}}}, now)
	c, pass := rig.c, rig.pass

	if cond := pass(); cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != ReasonCopyUnavailable || !strings.Contains(cond.Message, "ref-backup-copy") {
		t.Fatalf("without the copy's credentials: %v; want Unknown CopyUnavailable naming the secret", cond)
	}
	if n := testutil.CollectAndCount(metrics.EntryCopyLag); n != 0 {
		t.Fatalf("%d lag series while the copy cannot be read; want none", n)
	}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}}); err != nil {
		t.Fatal(err)
	}
	if cond := pass(); cond == nil || cond.Status != gardencorev1beta1.ConditionTrue || cond.Reason != ReasonCopied {
		t.Fatalf("with the copy's credentials: %v; want True Copied", cond)
	}
	var keys []string
	if err := mem.ListObjects(ctx, "bucket-copy", "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			keys = append(keys, o.Key)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, ",") != strings.Join(snaps, ",") {
		t.Fatalf("the copy holds %v; want exactly the entry's snapshots %v", keys, snaps)
	}
	if lag := testutil.ToFloat64(metrics.EntryCopyLag.WithLabelValues(name, "bucket", "bucket-copy")); lag != 0 {
		t.Fatalf("lag %v; want 0", lag)
	}
	if n := testutil.ToFloat64(metrics.EntryCopyObjects.WithLabelValues(name)); n != 2 {
		t.Fatalf("copied objects %v; want 2", n)
	}
}

// racingStore is a memstore whose first read of key writes other data to key in bucket
// "bucket-copy": someone else's write between the copy's listing and its write.
type racingStore struct {
	*memstore.Store

	key  string
	once sync.Once
}

func (s *racingStore) OpenObject(ctx context.Context, bucket, key, version string) (io.ReadCloser, error) {
	if key == s.key {
		s.once.Do(func() {
			if err := s.PutObject(ctx, "bucket-copy", key, []byte("written meanwhile")); err != nil {
				panic(err)
			}
		})
	}
	return s.Store.OpenObject(ctx, bucket, key, version)
}

// TestCopyPassWritesGuarded: the pass hands the engine the copy store itself, so that a store
// with conditional writes has every write guarded (no "not guarded" in the condition) and a
// snapshot written to the copy after the listing is kept, not overwritten.
func TestCopyPassWritesGuarded(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	name := "shoot--p--s--1"
	snaps := []string{name + "/etcd-main/v2/Full-00000000-00000010-1764417600", name + "/etcd-main/v2/Incr-00000011-00000020-1764417900"}
	mem := controllertest.Bucket(t, "bucket", snaps...)
	if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket-copy"}); err != nil {
		t.Fatal(err)
	}
	store := &racingStore{Store: mem, key: snaps[1]}
	rig := newCopyRig(t, store, name, controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy"}}}, now)
	if err := rig.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}}); err != nil {
		t.Fatal(err)
	}
	cond := rig.pass()
	if cond == nil || strings.Contains(cond.Message, "not guarded") {
		t.Errorf("BackupsCopied %v; want every write guarded", cond)
	}
	data, err := objectstore.ReadObject(ctx, mem, "bucket-copy", snaps[1])
	if err != nil || string(data) != "written meanwhile" {
		t.Errorf("the copy's %s holds %q (%v); want what was written there after the listing, kept", snaps[1], data, err)
	}
	if data, err := objectstore.ReadObject(ctx, mem, "bucket-copy", snaps[0]); err != nil || string(data) != "data of "+snaps[0] {
		t.Fatalf("the copy's %s holds %q (%v); want the snapshot copied", snaps[0], data, err)
	}
}

// TestCopyOntoItself: a copy bucket that is the entry's own bucket is refused: False CopyIsSource,
// nothing written, no lag series.
func TestCopyOntoItself(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	name := "shoot--p--s--1"
	store := memstore.WithFaults(controllertest.Bucket(t, "bucket", name+"/etcd-main/v2/Full-00000000-00000010-1764417600"))
	rig := newCopyRig(t, store, name, controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy", BucketName: "bucket"}}}, now)
	if err := rig.c.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}}); err != nil {
		t.Fatal(err)
	}
	if cond := rig.pass(); cond == nil || cond.Status != gardencorev1beta1.ConditionFalse || cond.Reason != ReasonCopyIsSource {
		t.Fatalf("copy onto the entry's own bucket: %v; want False CopyIsSource", cond)
	}
	if n, w := store.Calls(memstore.OpListObjects), store.Calls(memstore.OpPutObject); n != 0 || w != 0 {
		t.Fatalf("%d listings, %d writes for a copy onto itself; want none", n, w)
	}
	if n := testutil.CollectAndCount(metrics.EntryCopyLag); n != 0 {
		t.Fatalf("%d lag series for a copy onto itself; want none", n)
	}
}

// copyingStore is a memstore that copies inside itself (objectstore.ServerSideCopier), counted.
type copyingStore struct {
	*memstore.Store

	copies atomic.Int64
}

func (s *copyingStore) CopyObject(ctx context.Context, srcBucket string, src objectstore.ObjectVersion, dstBucket, dstKey string) error {
	s.copies.Add(1)
	data, err := objectstore.ReadObject(ctx, s.Store, srcBucket, src.Key)
	if err != nil {
		return err
	}
	return s.PutObject(ctx, dstBucket, dstKey, data)
}

// otherMem is a store of another type than controllertest's "mem".
type otherMem struct{ controllertest.Provider }

func (otherMem) Type() string { return "mem2" }

// TestCopyPassAcrossTypesStreams: a copy in a store of another type is never tried server-side
// (a store of one type cannot read another's bucket): every snapshot is streamed.
func TestCopyPassAcrossTypesStreams(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	name := "shoot--p--s--1"
	snaps := []string{name + "/etcd-main/v2/Full-00000000-00000010-1764417600", name + "/etcd-main/v2/Incr-00000011-00000020-1764417900"}
	mem := controllertest.Bucket(t, "bucket", snaps...)
	if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket-copy"}); err != nil {
		t.Fatal(err)
	}
	store := &copyingStore{Store: mem}
	rig := newCopyRig(t, store, name, controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{Type: "mem2", CredentialsRef: "backup-copy"}}}, now)
	seeded, err := provider.WithSeedConfig(provider.Register(controllertest.Provider{Store: store}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seeded.SetCopyStores(provider.Register(otherMem{controllertest.Provider{Store: store}}))
	rig.cp.Provider = seeded
	if err := rig.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}}); err != nil {
		t.Fatal(err)
	}
	if cond := rig.pass(); cond == nil || cond.Status != gardencorev1beta1.ConditionTrue || cond.Reason != ReasonCopied {
		t.Fatalf("BackupsCopied %v; want True Copied", cond)
	}
	if n := store.copies.Load(); n != 0 {
		t.Errorf("%d server-side copies into a store of another type; want none", n)
	}
	for _, k := range snaps {
		if data, err := objectstore.ReadObject(ctx, mem, "bucket-copy", k); err != nil || string(data) != "data of "+k {
			t.Errorf("the copy's %s holds %q (%v); want the snapshot streamed", k, data, err)
		}
	}
}
