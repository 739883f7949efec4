// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

func TestDecideCopy(t *testing.T) {
	now := created.Add(48 * time.Hour)
	here := &drill.Status{Bucket: "copy", Region: "r", DrilledAt: metav1.NewTime(now.Add(-time.Hour))}
	started := metav1.NewTime(now.Add(-time.Minute))
	base := copyState{declared: true, bucket: "copy", region: "r", succeeded: true, first: now.Add(time.Hour), due: now.Add(time.Hour), now: now}
	for _, c := range []struct {
		name string
		set  func(*copyState)
		step copyStep
		at   time.Time
	}{
		{"none declared", func(s *copyState) { s.declared, s.last, s.started = false, here, &started }, copyWithdraw, time.Time{}},
		{"the copy is the entry's bucket", func(s *copyState) { s.bucket, s.isSource, s.last = bucket, true, here }, copyIsSource, time.Time{}},
		{"a mark left", func(s *copyState) { s.last, s.started = here, &started }, copyInterrupted, time.Time{}},
		{"a mark left, never drilled", func(s *copyState) { s.started = &started }, copyInterrupted, time.Time{}},
		{"never reconciled", func(s *copyState) { s.succeeded = false }, copyWait, time.Time{}},
		{"before its first slot", func(*copyState) {}, copyPending, now.Add(time.Hour)},
		{"at its first slot", func(s *copyState) { s.first = now }, copyDrillNow, time.Time{}},
		{"not due", func(s *copyState) { s.last = here }, copyWait, now.Add(time.Hour)},
		{"due", func(s *copyState) { s.last, s.due = here, now }, copyDrillNow, time.Time{}},
		{"the copy moved to another bucket", func(s *copyState) { s.last, s.bucket = here, "copy2" }, copyDrillNow, time.Time{}},
		{"the copy moved to another region", func(s *copyState) { s.last, s.region = here, "r2" }, copyDrillNow, time.Time{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base
			c.set(&s)
			if step, at := decideCopy(s); step != c.step || !at.Equal(c.at) {
				t.Errorf("decideCopy = %d %s; want %d %s", step, at, c.step, c.at)
			}
		})
	}
}

const copyBucket = bucket + "-copy"

// withCopy declares (or, with declare false, no longer declares) a copy in the entry's config,
// its bucket the default name, its credentials ref-backup-copy, as the seed configuration does.
func (f *fixture) withCopy(declare bool) {
	f.t.Helper()
	ctx := context.Background()
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(ctx, objKey(entryName), be); err != nil {
		f.t.Fatal(err)
	}
	cfg := controllertest.Config{}
	if declare {
		cfg.Copy = &copystore.Settings{CredentialsRef: "backup-copy"}
	}
	be.Spec.ProviderConfig = controllertest.RawConfig(cfg)
	if err := f.client.Update(ctx, be); err != nil {
		f.t.Fatal(err)
	}
}

// copyAll copies every object of the entry's bucket into the copy bucket.
func (f *fixture) copyAll() {
	f.t.Helper()
	ctx := context.Background()
	if err := f.mem.ListObjects(ctx, bucket, "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			rc, err := f.mem.OpenObject(ctx, bucket, o.Key, "")
			if err != nil {
				return err
			}
			data, err := io.ReadAll(rc)
			_ = rc.Close()
			if err != nil {
				return err
			}
			if err := f.mem.PutObject(ctx, copyBucket, o.Key, data); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		f.t.Fatal(err)
	}
}

// copyOutcome is CopyRestorable and the copy's part of providerStatus in o.
func copyOutcome(t *testing.T, o outcome) (*gardencorev1beta1.Condition, entryinfo.ProviderStatus) {
	t.Helper()
	return v1beta1helper.GetCondition(o.be.Status.Conditions, ConditionCopyRestorable), readPS(t, o.be)
}

// copyValue is entry_restorable of the fixture's entry's copy and etcd-main (-1: absent).
func copyValue() float64 {
	ch := make(chan prometheus.Metric, 1000)
	metrics.Restorable.Collect(ch)
	close(ch)
	for m := range ch {
		var d dto.Metric
		_ = m.Write(&d)
		labels := map[string]string{}
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["entry"] == entryName && labels["etcd"] == "etcd-main" && labels["store"] == metrics.StoreCopy {
			return d.GetGauge().GetValue()
		}
	}
	return -1
}

// TestCopyDrill: with a copy declared, the copy bucket is drilled beside the entry's own bucket,
// with the copy's credentials, half an interval after it: CopyRestorable True while the copy
// holds the chain; a delta missing in the copy is False ChainBroken there while
// BackupsRestorable stays True; a copy drill whose process ended is Unknown DrillInterrupted
// (its mark removed); no copy declared any more removes CopyRestorable, the copy's drill status
// and its series, and leaves the primary's.
func TestCopyDrill(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: copystore.CredentialsNamespace, Name: "ref-backup-copy"}, Data: map[string][]byte{"key": []byte("c")}})
	if err := f.mem.EnsureBucket(ctx, objectstore.Bucket{Name: copyBucket}); err != nil {
		t.Fatal(err)
	}
	keys := f.chain("etcd-main")
	f.copyAll()
	f.withCopy(true)

	o := f.reconcile()
	cond, _ := copyOutcome(t, o)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != ReasonNotDrilledYet || f.restores.Load() != 0 {
		t.Fatalf("before its slot: CopyRestorable %+v, %d restores", cond, f.restores.Load())
	}
	primaryFirst := periodic.FirstSlot(o.be, interval, f.r.Started) // Started: the fixture clock at the entry's creation
	if copyFirst := f.r.copyFirstSlot(o.be); !copyFirst.Equal(primaryFirst.Add(interval / 2)) {
		t.Fatalf("the copy's first slot %s; want half an interval after the primary's %s", copyFirst, primaryFirst)
	}

	f.clock.Step(2 * interval)
	o = f.reconcile()
	cond, ps := copyOutcome(t, o)
	if o.cond == nil || o.cond.Status != gardencorev1beta1.ConditionTrue || cond == nil || cond.Status != gardencorev1beta1.ConditionTrue || cond.Reason != ReasonRestored ||
		!strings.Contains(cond.Message, copyBucket) || ps.CopyDrill == nil || ps.CopyDrill.Bucket != copyBucket || ps.CopyDrillStarted != nil || ps.DrillStarted != nil {
		t.Fatalf("both drilled: BackupsRestorable %+v, CopyRestorable %+v, copyDrill %+v", o.cond, cond, ps.CopyDrill)
	}
	if f.restores.Load() != 2 {
		t.Fatalf("%d restores; want 2 (the entry's bucket and the copy)", f.restores.Load())
	}
	if v := copyValue(); v != 1 {
		t.Fatalf("entry_restorable{store=copy} %v; want 1", v)
	}
	if v := testValue(t); v != 1 {
		t.Fatalf("entry_restorable{store=primary} %v; want 1", v)
	}

	// A delta missing in the copy: the copy is not restorable, the entry's bucket is.
	if _, err := f.mem.DeleteObjects(ctx, copyBucket, objVersions(keys[2])); err != nil {
		t.Fatal(err)
	}
	f.events()
	f.clock.Step(interval + time.Hour)
	o = f.reconcile()
	cond, _ = copyOutcome(t, o)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionFalse || cond.Reason != string(drill.ReasonChainBroken) {
		t.Fatalf("a delta missing in the copy: CopyRestorable %+v; want False ChainBroken", cond)
	}
	if o.cond == nil || o.cond.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("a delta missing in the copy: BackupsRestorable %+v; want True", o.cond)
	}
	if v, p := copyValue(), testValue(t); v != 0 || p != 1 {
		t.Fatalf("entry_restorable copy %v, primary %v; want 0 and 1", v, p)
	}
	if ev := strings.Join(f.events(), "\n"); !strings.Contains(ev, EventCopyNotRestorable) || strings.Contains(ev, EventNotRestorable+" ") {
		t.Fatalf("events %q; want %s only", ev, EventCopyNotRestorable)
	}

	// A copy drill's process ended during it: its mark is found.
	be := o.be.DeepCopy()
	entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { m := metav1.NewTime(f.clock.Now()); ps.CopyDrillStarted = &m })
	if err := f.client.Status().Update(ctx, be); err != nil {
		t.Fatal(err)
	}
	restores := f.restores.Load()
	o = f.reconcile()
	cond, ps = copyOutcome(t, o)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != ReasonDrillInterrupted || ps.CopyDrillStarted != nil || f.restores.Load() != restores {
		t.Fatalf("a copy drill's mark left: CopyRestorable %+v, mark %v, %d restores; want Unknown DrillInterrupted, the mark removed, nothing drilled", cond, ps.CopyDrillStarted, f.restores.Load()-restores)
	}
	if o.cond == nil || o.cond.Status != gardencorev1beta1.ConditionTrue || ps.Drill == nil {
		t.Fatalf("a copy drill's mark left: BackupsRestorable %+v; want it untouched", o.cond)
	}
	if v := copyValue(); v != 0 {
		t.Fatalf("entry_restorable copy %v after an interrupted drill; want the last finding's 0", v)
	}

	// No copy declared any more.
	f.withCopy(false)
	o = f.reconcile()
	cond, ps = copyOutcome(t, o)
	if cond != nil || ps.CopyDrill != nil || ps.CopyDrillStarted != nil {
		t.Fatalf("no copy declared: CopyRestorable %+v, copyDrill %+v; want both gone", cond, ps.CopyDrill)
	}
	if copyValue() != -1 {
		t.Fatal("the copy's series left after the copy was no longer declared")
	}
	if o.cond == nil || o.cond.Status != gardencorev1beta1.ConditionTrue || ps.Drill == nil || testValue(t) != 1 {
		t.Fatalf("no copy declared: BackupsRestorable %+v; want the primary's condition, status and series kept", o.cond)
	}
}

// TestCopyIsSource: a copy declared in the entry's own bucket is no second copy: CopyRestorable
// False CopyIsSource, nothing drilled as the copy, no copy series; the entry's bucket is drilled.
func TestCopyIsSource(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.chain("etcd-main")
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(ctx, objKey(entryName), be); err != nil {
		t.Fatal(err)
	}
	be.Spec.ProviderConfig = controllertest.RawConfig(controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy", BucketName: bucket}}})
	if err := f.client.Update(ctx, be); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(2 * interval)
	o := f.reconcile()
	cond, ps := copyOutcome(t, o)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionFalse || cond.Reason != ReasonCopyIsSource || ps.CopyDrill != nil || ps.CopyDrillStarted != nil {
		t.Fatalf("CopyRestorable %+v, copyDrill %+v; want False CopyIsSource, no copy drill", cond, ps.CopyDrill)
	}
	if o.cond == nil || o.cond.Status != gardencorev1beta1.ConditionTrue || f.restores.Load() != 1 || copyValue() != -1 {
		t.Fatalf("BackupsRestorable %+v, %d restores, copy series %v; want the entry's bucket drilled once, no copy series", o.cond, f.restores.Load(), copyValue())
	}
}

// otherMem is a store of another type than controllertest's "mem", on the same memstore.
type otherMem struct{ controllertest.Provider }

func (otherMem) Type() string { return "mem2" }

// withCopyOfType declares a copy of type typ named bucketName, on a provider of the entry's type
// seeded with a copy store of type "mem2" (on the fixture's memstore).
func (f *fixture) withCopyOfType(typ, bucketName string) {
	f.t.Helper()
	ctx := context.Background()
	seeded, err := provider.WithSeedConfig(provider.Register(controllertest.Provider{Store: f.faults}), nil, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	seeded.SetCopyStores(provider.Register(otherMem{controllertest.Provider{Store: f.faults}}))
	f.r.Provider = seeded
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(ctx, objKey(entryName), be); err != nil {
		f.t.Fatal(err)
	}
	be.Spec.ProviderConfig = controllertest.RawConfig(controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{Type: typ, CredentialsRef: "backup-copy", BucketName: bucketName}}})
	if err := f.client.Update(ctx, be); err != nil {
		f.t.Fatal(err)
	}
}

// TestCopyOfAnotherTypeNamedAsTheEntrysBucket: a copy bucket named as the entry's bucket in a
// store of another type is another bucket: it is drilled (CopyRestorable True), not reported
// CopyIsSource.
func TestCopyOfAnotherTypeNamedAsTheEntrysBucket(t *testing.T) {
	f := newFixture(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: copystore.CredentialsNamespace, Name: "ref-backup-copy"}, Data: map[string][]byte{"key": []byte("c")}})
	f.chain("etcd-main")
	f.withCopyOfType("mem2", bucket)
	f.clock.Step(2 * interval)
	o := f.reconcile()
	cond, ps := copyOutcome(t, o)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionTrue || cond.Reason != ReasonRestored || ps.CopyDrill == nil || ps.CopyDrill.Bucket != bucket {
		t.Fatalf("CopyRestorable %+v, copyDrill %+v; want True Restored, the copy of type mem2 drilled", cond, ps.CopyDrill)
	}
	if f.restores.Load() != 2 || copyValue() != 1 {
		t.Fatalf("%d restores, copy series %v; want 2 (the entry's bucket and the copy), 1", f.restores.Load(), copyValue())
	}
}

// TestCopyThisBinaryCannotWrite: a copy of a type the binary writes no copy of (CopyPlaceOf's
// error) is CopyRestorable Unknown DrillFailed naming copy.type, looked at again an interval
// later, not a reconcile error; the entry's bucket is drilled as before.
func TestCopyThisBinaryCannotWrite(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.withCopyOfType("local", "")
	f.clock.Step(2 * interval)
	o := f.reconcile()
	cond, ps := copyOutcome(t, o)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != ReasonDrillFailed || !strings.Contains(cond.Message, `copy.type "local"`) || ps.CopyDrill != nil {
		t.Fatalf("CopyRestorable %+v, copyDrill %+v; want Unknown DrillFailed naming copy.type, no copy drill", cond, ps.CopyDrill)
	}
	if o.cond == nil || o.cond.Status != gardencorev1beta1.ConditionTrue || f.restores.Load() != 1 {
		t.Fatalf("BackupsRestorable %+v, %d restores; want the entry's bucket drilled once", o.cond, f.restores.Load())
	}
}
