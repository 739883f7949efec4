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
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// longChain is the number of deltas a compromised control plane writes to its own prefix to hold
// the drill slot.
const longChain = 100_000

// other is the entry that waits for the slot.
const other = "shoot--p--other--uid"

// withLongChain gives the fixture a store listed in one page (the memstore sorts all it holds for
// every page: the fixture's pages of 10 would make a listing of 100,000 keys slow) with a full snapshot and longChain deltas of
// etcd-main under the fixture's entry, and a short sound chain under other's.
func (f *fixture) withLongChain() {
	f.t.Helper()
	ctx := context.Background()
	f.mem = memstore.New(1000).WithPageSize(1 << 20)
	if err := f.mem.EnsureBucket(ctx, objectstore.Bucket{Name: bucket}); err != nil {
		f.t.Fatal(err)
	}
	f.faults = memstore.WithFaults(f.mem)
	f.r.SourceFor = StoreSource(f.client, provider.Register(controllertest.Provider{Store: f.faults}))
	f.put("etcd-main", drill.KindFull, 0, 1)
	delta := withHash([]byte("[]"))
	for i := range int64(longChain) {
		f.putRaw(fmt.Sprintf("%s/etcd-main/v2/Incr-%08d-%08d-%d", entryName, i+2, i+2, f.unix+1+i), delta)
	}
	f.putFor(other)
	metrics.ForgetDrills(other)
	f.t.Cleanup(func() { metrics.ForgetDrills(other) })
}

// look reconciles name, without the fixture's listing of the store before and after (100,000
// keys), and returns its BackupsRestorable and drill status.
func (f *fixture) look(name string) outcome {
	f.t.Helper()
	res, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
	if err != nil {
		f.t.Fatalf("reconcile %s: %v", name, err)
	}
	be := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(context.Background(), objKey(name), be); err != nil {
		f.t.Fatal(err)
	}
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil {
		f.t.Fatal(err)
	}
	return outcome{cond: v1beta1helper.GetCondition(be.Status.Conditions, ConditionBackupsRestorable), drill: ps.Drill, requeue: res.RequeueAfter, be: be}
}

// A chain of 100,000 deltas cannot hold the process's one drill slot: with the default caps the
// listing is cut off; with the caps lifted, a restore that would never end is cut off at the
// drill's deadline while the other entry waits for the slot, and is drilled then. The cut-off
// entry is Unknown/CutOff (not restorable is not claimed, nor restorable, nor DrillFailed) and
// goes to the back of the queue: it is drilled next a whole interval later, not retried within
// minutes as a failed drill is, and not at once when its chains heal by names.
func TestALongChainCannotHoldTheDrillSlot(t *testing.T) {
	defaults := DefaultOptions()
	for _, c := range []struct {
		name        string
		edit        func(*Options)
		wantMessage string
	}{
		{name: "default caps", edit: func(o *Options) {
			o.Deadline, o.MaxDeltas, o.MaxKeys = defaults.Deadline, defaults.MaxDeltas, defaults.MaxKeys
		},
			wantMessage: fmt.Sprintf("more than %d object versions", defaults.MaxKeys)},
		{name: "deadline", edit: func(o *Options) { o.Deadline = time.Second }, wantMessage: "deadline of 1s passed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, entry(other))
			f.withLongChain()
			c.edit(&f.r.Options)
			f.restore = func(ctx context.Context, ch drill.Chain, dir string, deltas *os.File) drill.Result {
				if strings.HasPrefix(ch.Full.Key, other+"/") {
					return f.restored(ctx, ch, dir, deltas)
				}
				<-ctx.Done() // slower than any deadline
				return drill.Result{Etcd: ch.Etcd, Err: ctx.Err()}
			}
			f.clock.Step(interval + time.Hour) // both entries' first slots passed

			var long, waiting outcome
			var wg sync.WaitGroup
			wg.Go(func() { long = f.look(entryName) })
			wg.Go(func() { waiting = f.look(other) })
			wg.Wait()

			if long.cond == nil || long.cond.Status != gardencorev1beta1.ConditionUnknown || long.cond.Reason != string(drill.ReasonCutOff) || !strings.Contains(long.cond.Message, c.wantMessage) {
				t.Fatalf("the long chain's condition %+v; want Unknown/CutOff saying %q", long.cond, c.wantMessage)
			}
			if long.drill == nil || long.drill.CutOff == "" || long.drill.Error != "" {
				t.Fatalf("the long chain's drill status %+v; want cut off, not failed", long.drill)
			}
			if has(metrics.Restorable, "etcd-main") {
				t.Error("entry_restorable set for a drill that was cut off")
			}
			if waiting.cond == nil || waiting.cond.Status != gardencorev1beta1.ConditionTrue {
				t.Fatalf("the other entry's condition %+v; want drilled, True", waiting.cond)
			}
			if long.requeue < interval-time.Hour {
				t.Fatalf("the cut-off entry is drilled again in %s; want an interval (%s) later", long.requeue, interval)
			}

			// Past a failed drill's retry, and with its chain broken and healed by names: not
			// drilled before its turn.
			listings := f.faults.Calls(memstore.OpListObjects)
			f.clock.Step(maxRetry + time.Minute)
			f.look(entryName)
			for _, findings := range [][]drill.ChainFinding{{{Etcd: "etcd-main", Reason: drill.ReasonChainBroken, Detail: "gap"}}, nil} {
				f.clock.Step(time.Minute)
				be := f.look(entryName).be
				entryinfo.MergeProviderStatus(be, func(ps *entryinfo.ProviderStatus) {
					ps.Chains = &drill.ChainCheck{CheckedAt: metav1.NewTime(f.clock.Now()), Findings: findings}
					if findings == nil {
						ps.Chains = nil
					}
				})
				if err := f.client.Status().Update(context.Background(), be); err != nil {
					t.Fatal(err)
				}
			}
			if o := f.look(entryName); f.faults.Calls(memstore.OpListObjects) != listings || o.drill.CutOff == "" {
				t.Fatalf("drilled before its turn: %d listings (had %d), %+v", f.faults.Calls(memstore.OpListObjects), listings, o.cond)
			}
		})
	}
}
