// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// has reports whether g holds a series of the entry's etcd.
func has(g *prometheus.GaugeVec, etcd string) bool {
	ch := make(chan prometheus.Metric, 1000)
	g.Collect(ch)
	close(ch)
	for m := range ch {
		var d dto.Metric
		_ = m.Write(&d)
		labels := map[string]string{}
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["entry"] == entryName && labels["etcd"] == etcd {
			return true
		}
	}
	return false
}

func TestDrillOnScheduleRestorable(t *testing.T) {
	f := newFixture(t)
	main := f.chain("etcd-main")
	f.chain("etcd-events")
	f.toFirstDrill()
	if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "Normal "+EventRestorabilityUnknown) {
		t.Errorf("events before the first drill: %q", ev)
	}

	o := f.reconcile()
	if o.cond.Status != gardencorev1beta1.ConditionTrue || o.cond.Reason != ReasonRestored || f.restores.Load() != 2 {
		t.Fatalf("first drill: %+v, %d restores", o.cond, f.restores.Load())
	}
	for _, want := range []string{"etcd-main: restored to revision 40", main[0], "3 deltas", "etcd-events: restored"} {
		if !strings.Contains(o.cond.Message, want) {
			t.Errorf("message %q lacks %q", o.cond.Message, want)
		}
	}
	if o.drill == nil || len(o.drill.Etcds) != 2 || o.drill.Bucket != bucket || !o.drill.DrilledAt.Time.Equal(f.clock.Now()) {
		t.Fatalf("drill status %+v", o.drill)
	}
	if e := o.drill.Etcds[1]; e.Name != "etcd-main" || e.Restorable != "True" || e.Revision != 40 || e.Deltas != 3 || e.FullSnapshot != main[0] || e.BytesRead != e.Size || e.Size == 0 || e.Duration.Duration <= 0 {
		t.Errorf("etcd-main's status %+v", e)
	}
	if o.requeue < interval || o.requeue > interval+interval/10+time.Second {
		t.Errorf("next drill in %s, want the interval with up to 10%% jitter", o.requeue)
	}
	if v := testutil.ToFloat64(metrics.Restorable.WithLabelValues(entryName, "etcd-main", metrics.StorePrimary)); v != 1 {
		t.Errorf("entry_restorable %v", v)
	}
	if v := testutil.ToFloat64(metrics.DrillRevision.WithLabelValues(entryName, "etcd-main", metrics.StorePrimary)); v != 40 {
		t.Errorf("entry_drill_revision %v", v)
	}
	if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "Normal "+EventRestorable) {
		t.Errorf("events of the first verdict: %q", ev)
	}

	// Woken before it is due (a spec change): nothing drilled.
	f.clock.Step(time.Hour)
	if o := f.reconcile(); f.restores.Load() != 2 || o.requeue > interval {
		t.Fatalf("drilled before due: %d restores, requeue %s", f.restores.Load(), o.requeue)
	}
	// Due: drilled again; the same verdict is no new event.
	f.clock.Step(interval)
	if o := f.reconcile(); o.cond.Status != gardencorev1beta1.ConditionTrue || f.restores.Load() != 4 {
		t.Fatalf("second drill: %+v, %d restores", o.cond, f.restores.Load())
	}
	if ev := f.events(); len(ev) != 0 {
		t.Errorf("events without a change of verdict: %q", ev)
	}
}

// Each finding is False with its reason, a Warning event and entry_restorable 0; the verdict's
// changes back and forth are events.
func TestFindingsAreNotRestorable(t *testing.T) {
	cases := []struct {
		name   string
		damage func(f *fixture, keys []string)
		reason drill.Reason
		// restore: whether the restore started. It starts once the full snapshot is verified,
		// while the deltas download (a damaged delta is never sent to it, and the download's
		// finding is the verdict), and not at all for a chain broken by names.
		restore bool
	}{
		{"a byte flipped in a delta", func(f *fixture, keys []string) {
			data := withHash([]byte("[]"))
			data[0] ^= 0xff
			f.putRaw(keys[2], data)
		}, drill.ReasonHashMismatch, true},
		{"a missing middle delta", func(f *fixture, keys []string) {
			if _, err := f.mem.DeleteObjects(context.Background(), bucket, []objectstore.ObjectVersion{{Key: keys[2]}}); err != nil {
				f.t.Fatal(err)
			}
		}, drill.ReasonChainBroken, false},
		{"an empty delta", func(f *fixture, keys []string) { f.putRaw(keys[3], nil) }, drill.ReasonUndecodable, true},
		{"deltas without a full snapshot", func(f *fixture, keys []string) {
			if _, err := f.mem.DeleteObjects(context.Background(), bucket, []objectstore.ObjectVersion{{Key: keys[0]}}); err != nil {
				f.t.Fatal(err)
			}
		}, drill.ReasonNoFullSnapshot, false},
		{"etcd refuses the restore", func(f *fixture, _ []string) {
			f.restore = func(_ context.Context, ch drill.Chain, _ string, _ *os.File) drill.Result {
				return drill.Result{Etcd: ch.Etcd, Err: drill.NewFinding(drill.ReasonRestoreFailed, ch.Full.Key, "etcd refused it")}
			}
		}, drill.ReasonRestoreFailed, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, cluster(false))
			keys := f.chain("etcd-main")
			f.toFirstDrill()
			if o := f.reconcile(); o.cond.Status != gardencorev1beta1.ConditionTrue {
				t.Fatalf("intact chain: %+v", o.cond)
			}
			f.events()

			c.damage(f, keys)
			restores := f.restores.Load()
			f.clock.Step(interval + time.Minute)
			o := f.reconcile()
			if o.cond.Status != gardencorev1beta1.ConditionFalse || o.cond.Reason != string(c.reason) {
				t.Fatalf("condition %+v, want False/%s", o.cond, c.reason)
			}
			if e := o.drill.Etcds[0]; e.Restorable != "False" || e.Reason != string(c.reason) || e.Message == "" {
				t.Errorf("etcd status %+v", e)
			}
			if got := f.restores.Load() > restores; got != c.restore {
				t.Errorf("restore ran: %t, want %t", got, c.restore)
			}
			if v := testutil.ToFloat64(metrics.Restorable.WithLabelValues(entryName, "etcd-main", metrics.StorePrimary)); v != 0 {
				t.Errorf("entry_restorable %v, want 0", v)
			}
			if has(metrics.DrillRevision, "etcd-main") {
				t.Error("entry_drill_revision kept for a backup not restorable")
			}
			if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "Warning "+EventNotRestorable) || !strings.Contains(ev[0], string(c.reason)) {
				t.Errorf("events: %q", ev)
			}
			// The same finding again is no new event.
			f.clock.Step(interval + time.Minute)
			f.reconcile()
			if ev := f.events(); len(ev) != 0 {
				t.Errorf("events without a change: %q", ev)
			}
		})
	}
}

// A chain over the byte budget is Unknown with its size, nothing downloaded, never restorable.
func TestOverTheBudgetIsUnknown(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.r.Options.MaxBytes = 100
	f.toFirstDrill()
	o := f.reconcile()
	if o.cond.Status != gardencorev1beta1.ConditionUnknown || o.cond.Reason != string(drill.ReasonTooLarge) || !strings.Contains(o.cond.Message, fmt.Sprintf("chain of %d bytes", o.drill.Etcds[0].Size)) {
		t.Fatalf("condition %+v", o.cond)
	}
	if f.faults.Calls(memstore.OpOpenObject) != 0 || f.restores.Load() != 0 {
		t.Errorf("read %d objects, %d restores", f.faults.Calls(memstore.OpOpenObject), f.restores.Load())
	}
	if has(metrics.Restorable, "etcd-main") {
		t.Error("entry_restorable set for a chain not drilled")
	}
}

// The store failing proves nothing: Unknown/DrillFailed, retried within minutes, and the metric
// keeps what the last drill found.
func TestStoreErrorsProveNothing(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.toFirstDrill()
	f.reconcile()
	f.events()

	f.faults.Fail(memstore.OpOpenObject, fmt.Errorf("slow down: %w", objectstore.ErrThrottled))
	f.clock.Step(interval + time.Minute)
	o := f.reconcile()
	if o.cond.Status != gardencorev1beta1.ConditionUnknown || o.cond.Reason != ReasonDrillFailed || !strings.Contains(o.cond.Message, "throttled") {
		t.Fatalf("condition %+v", o.cond)
	}
	if o.requeue > maxRetry+maxRetry/10+time.Second {
		t.Errorf("retry in %s", o.requeue)
	}
	if v := testutil.ToFloat64(metrics.Restorable.WithLabelValues(entryName, "etcd-main", metrics.StorePrimary)); v != 1 {
		t.Errorf("entry_restorable %v, want the last drill's 1", v)
	}
	if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], EventRestorabilityUnknown) {
		t.Errorf("events: %q", ev)
	}

	f.faults.Fail(memstore.OpOpenObject, nil)
	f.faults.Fail(memstore.OpListObjects, fmt.Errorf("denied: %w", objectstore.ErrForbidden))
	f.clock.Step(o.requeue)
	if o = f.reconcile(); o.cond.Reason != ReasonDrillFailed || !strings.Contains(o.cond.Message, "forbidden") || o.drill.Error == "" {
		t.Fatalf("listing refused: %+v %+v", o.cond, o.drill)
	}

	f.faults.Fail(memstore.OpListObjects, nil)
	f.clock.Step(o.requeue)
	if o = f.reconcile(); o.cond.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("store back: %+v", o.cond)
	}
}

// Interval 0 removes the condition, the drill's status (the inventory's stays) and the metrics.
func TestSwitchedOffRemovesEverything(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.toFirstDrill()
	o := f.reconcile()
	if o.cond == nil || o.drill == nil || !has(metrics.Restorable, "etcd-main") {
		t.Fatal("nothing published to remove")
	}
	// The inventory's part of providerStatus, written by its own controller.
	inv := inventoryStatus(t, o.be)
	if err := f.client.Status().Update(context.Background(), inv); err != nil {
		t.Fatal(err)
	}
	if ps := readPS(t, inv); ps.Drill == nil || ps.Inventory == nil {
		t.Fatalf("providerStatus %s", inv.Status.ProviderStatus.Raw)
	}

	f.r.Options.Interval = 0
	o = f.reconcile()
	if o.cond != nil || o.drill != nil {
		t.Fatalf("left after switching off: %+v %+v", o.cond, o.drill)
	}
	if ps := readPS(t, o.be); ps.Inventory == nil {
		t.Error("the inventory's part of providerStatus was removed")
	}
	for _, g := range []*prometheus.GaugeVec{metrics.Restorable, metrics.DrillTime, metrics.DrillRevision, metrics.DrillBytes} {
		if has(g, "etcd-main") {
			t.Errorf("%v left", g)
		}
	}
	if f.restores.Load() != 1 {
		t.Errorf("%d restores", f.restores.Load())
	}
}

// An entry being deleted is not drilled: Unknown/Deleting, no metrics.
func TestEntryBeingDeletedIsNotDrilled(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.toFirstDrill()
	o := f.reconcile()
	o.be.Finalizers = []string{"test"}
	if err := f.client.Update(context.Background(), o.be); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(context.Background(), o.be); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(2 * interval)
	o = f.reconcile()
	if o.cond.Status != gardencorev1beta1.ConditionUnknown || o.cond.Reason != "Deleting" || f.restores.Load() != 1 {
		t.Fatalf("condition %+v, %d restores", o.cond, f.restores.Load())
	}
	if has(metrics.Restorable, "etcd-main") {
		t.Error("entry_restorable kept for an entry being deleted")
	}
}

// A shoot that takes no snapshots now (hibernated, gone) excuses a missing full snapshot, as
// BackupsFresh excuses old ones; damage it does not excuse.
func TestShootsThatTakeNoSnapshots(t *testing.T) {
	for _, c := range []struct {
		name    string
		cluster *extensionsv1alpha1.Cluster
		reason  string
	}{
		{"hibernated", cluster(true), "ShootHibernated"},
		{"gone", nil, "ShootGone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var objs []client.Object
			if c.cluster != nil {
				objs = append(objs, c.cluster)
			}
			f := newFixture(t, objs...)
			f.put("etcd-main", drill.KindDelta, 11, 20)
			keys := f.chain("etcd-events")
			f.toFirstDrill()
			o := f.reconcile()
			if o.cond.Status != gardencorev1beta1.ConditionUnknown || o.cond.Reason != c.reason {
				t.Fatalf("no full snapshot: %+v, want Unknown/%s", o.cond, c.reason)
			}
			if has(metrics.Restorable, "etcd-main") || !has(metrics.Restorable, "etcd-events") {
				t.Error("entry_restorable: want none for the excused etcd, one for the restored")
			}
			f.putRaw(keys[1], nil)
			f.clock.Step(interval + time.Minute)
			if o = f.reconcile(); o.cond.Status != gardencorev1beta1.ConditionFalse || o.cond.Reason != string(drill.ReasonUndecodable) {
				t.Fatalf("damaged chain of a %s shoot: %+v", c.name, o.cond)
			}
		})
	}
}

// Never more drills at once than the process's concurrency, however many entries are due.
func TestConcurrencyBound(t *testing.T) {
	const entries, concurrency = 6, 2
	var extra []client.Object
	for i := range entries - 1 {
		extra = append(extra, entry(fmt.Sprintf("shoot--p--s%d--uid", i)))
	}
	f := newFixture(t, extra...)
	f.r.Slots = make(chan struct{}, concurrency)
	var inFlight, most atomic.Int32
	f.restore = func(ctx context.Context, ch drill.Chain, dir string, deltas *os.File) drill.Result {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m; m = most.Load() {
			if most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond) // overlap, if the bound lets it
		return f.restored(ctx, ch, dir, deltas)
	}
	names := []string{entryName}
	for _, o := range extra {
		names = append(names, o.GetName())
	}
	for _, name := range names {
		f.putFor(name)
	}
	f.clock.Step(interval + time.Hour) // every slot passed
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if f.restores.Load() != entries || most.Load() > concurrency {
		t.Fatalf("%d restores, at most %d at once; want %d, at most %d", f.restores.Load(), most.Load(), entries, concurrency)
	}
	for _, name := range names {
		metrics.ForgetDrills(name)
	}
}
