// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
)

// The drill marks the entry before it reads anything, and its result removes the mark: a
// restore sees DrillStarted on the entry, and the published status has none.
func TestDrillMarksTheEntryWhileItRuns(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.toFirstDrill()
	var marked *metav1.Time
	f.restore = func(ctx context.Context, ch drill.Chain, dir string, deltas *os.File) drill.Result {
		be := &extensionsv1alpha1.BackupEntry{}
		if err := f.client.Get(ctx, objKey(entryName), be); err != nil {
			t.Fatal(err)
		}
		marked = readPS(t, be).DrillStarted
		return f.restored(ctx, ch, dir, deltas)
	}
	o := f.reconcile()
	if marked == nil || !marked.Time.Equal(f.clock.Now().Truncate(time.Second)) {
		t.Errorf("during the restore DrillStarted = %v; want the drill's start %s", marked, f.clock.Now())
	}
	if o.cond.Reason != ReasonRestored {
		t.Fatalf("BackupsRestorable %+v; want Restored", o.cond)
	}
	if ps := readPS(t, o.be); ps.DrillStarted != nil {
		t.Errorf("DrillStarted %v left after the drill published", ps.DrillStarted)
	}
}

// A mark found on an entry whose drill does not run in this process (its process was killed
// during the drill: the container's memory limit) is reported Unknown/DrillInterrupted at once,
// without a drill, the last drill's findings cited, the metrics left as the last drill set
// them, the mark removed, and the entry drilled again an interval later, not at once.
func TestAMarkLeftByAKilledProcessIsReportedInterrupted(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.toFirstDrill()
	if o := f.reconcile(); o.cond.Reason != ReasonRestored {
		t.Fatalf("first drill %+v", o.cond)
	}
	restores := f.restores.Load()
	f.clock.Step(interval + interval/5) // the next drill is due: the process starts it and is killed
	started := metav1.NewTime(f.clock.Now().Add(-time.Minute))
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(context.Background(), objKey(entryName), be); err != nil {
		t.Fatal(err)
	}
	entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) { ps.DrillStarted = &started })
	if err := f.client.Status().Update(context.Background(), be); err != nil {
		t.Fatal(err)
	}
	f.events()

	o := f.reconcile()
	if f.restores.Load() != restores {
		t.Errorf("%d restores; want none: the interruption is reported, not drilled into again", f.restores.Load()-restores)
	}
	if o.cond.Status != gardencorev1beta1.ConditionUnknown || o.cond.Reason != ReasonDrillInterrupted ||
		!strings.Contains(o.cond.Message, started.UTC().Format(time.RFC3339)) || !strings.Contains(o.cond.Message, "out of memory") ||
		!strings.Contains(o.cond.Message, "The drill before") {
		t.Errorf("BackupsRestorable %+v; want Unknown/DrillInterrupted naming the start, the likely cause and the drill before", o.cond)
	}
	if ps := readPS(t, o.be); ps.DrillStarted != nil || o.drill == nil || o.drill.Interrupted == "" {
		t.Errorf("providerStatus %+v, drill %+v; want the interruption published and the mark removed", ps.DrillStarted, o.drill)
	}
	if o.requeue < interval {
		t.Errorf("next drill in %s; want an interval (%s) later", o.requeue, interval)
	}
	if got := testValue(t); got != 1 {
		t.Errorf("entry_restorable %v; want the last drill's 1 kept (nothing proven since)", got)
	}
	if ev := fmt.Sprint(f.events()); !strings.Contains(ev, EventRestorabilityUnknown) {
		t.Errorf("events %s; want %s", ev, EventRestorabilityUnknown)
	}

	// Not drilled again before its turn: the next look waits.
	f.clock.Step(time.Hour)
	if o = f.reconcile(); f.restores.Load() != restores || o.cond.Reason != ReasonDrillInterrupted || o.requeue <= 0 {
		t.Errorf("an hour later: %d restores, %+v, requeue %s; want still waiting", f.restores.Load()-restores, o.cond, o.requeue)
	}
}

// A restore whose child was killed (drill.ErrRestoreKilled: the OOM killer at the container's
// limit, where only the child dies) proves nothing: Unknown/DrillInterrupted, and the entry is
// drilled again an interval later, not within minutes like a store that failed, so that a chain
// too large for the memory limit does not hold the drill slot every few minutes.
func TestAKilledRestoreIsInterruptedAndWaitsAnInterval(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.toFirstDrill()
	f.restore = func(_ context.Context, ch drill.Chain, _ string, _ *os.File) drill.Result {
		return drill.Result{Etcd: ch.Etcd, Full: ch.Full.Key, Err: fmt.Errorf("%w by SIGKILL (out of memory, most likely); nothing proven about the backup", drill.ErrRestoreKilled)}
	}
	o := f.reconcile()
	if o.cond.Status != gardencorev1beta1.ConditionUnknown || o.cond.Reason != ReasonDrillInterrupted || !strings.Contains(o.cond.Message, "killed") {
		t.Errorf("BackupsRestorable %+v; want Unknown/DrillInterrupted saying the restore was killed", o.cond)
	}
	if o.requeue < interval {
		t.Errorf("next drill in %s; want an interval (%s) later", o.requeue, interval)
	}
	if got := testValue(t); got != -1 {
		t.Errorf("entry_restorable %v; want no series (never proven)", got)
	}
}

// A drill whose process stops in order (ctx ends: a rollout) publishes nothing and removes its
// mark, so that the next process drills the entry at its turn instead of reporting it interrupted.
func TestAStoppedDrillRemovesItsMark(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.toFirstDrill()
	ctx, cancel := context.WithCancel(context.Background())
	f.restore = func(ctx context.Context, ch drill.Chain, _ string, _ *os.File) drill.Result {
		cancel()
		<-ctx.Done()
		return drill.Result{Etcd: ch.Etcd, Err: ctx.Err()}
	}
	if _, err := f.r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: entryName}}); err == nil {
		t.Fatal("a drill stopped by its ctx returned no error")
	}
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(context.Background(), objKey(entryName), be); err != nil {
		t.Fatal(err)
	}
	if ps := readPS(t, be); ps.DrillStarted != nil || ps.Drill != nil {
		t.Errorf("after a stop: mark %v, drill %+v; want neither", ps.DrillStarted, ps.Drill)
	}
}
