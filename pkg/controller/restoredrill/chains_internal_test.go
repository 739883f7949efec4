// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// setChains writes providerStatus.chains as the inventory does (as JSON: the inventory's code is
// not under test here), keeping the rest.
func (f *fixture) setChains(cc *drill.ChainCheck) {
	f.t.Helper()
	o := f.reconcileless()
	m := map[string]any{}
	if o.Status.ProviderStatus != nil {
		if err := json.Unmarshal(o.Status.ProviderStatus.Raw, &m); err != nil {
			f.t.Fatal(err)
		}
	}
	delete(m, "chains")
	if cc != nil {
		m["chains"] = cc
	}
	raw, _ := json.Marshal(m)
	o.Status.ProviderStatus = &runtime.RawExtension{Raw: raw}
	if err := f.client.Status().Update(context.Background(), o); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) reconcileless() *extensionsv1alpha1.BackupEntry {
	f.t.Helper()
	be := entry(entryName)
	if err := f.client.Get(context.Background(), objKey(entryName), be); err != nil {
		f.t.Fatal(err)
	}
	return be
}

// A chain the inventory found broken by names is False at once, before the entry's slot,
// without a download; once sound by names again it is drilled at once.
func TestChainBrokenByNamesIsReportedAtOnce(t *testing.T) {
	f := newFixture(t)
	keys := f.chain("etcd-main")
	f.chain("etcd-events")
	gap := keys[2]
	if _, err := f.mem.DeleteObjects(context.Background(), bucket, objVersions(gap)); err != nil {
		t.Fatal(err)
	}
	f.toFirstDrill()
	f.events()
	f.clock.Step(-time.Hour) // back before the slot: the finding does not wait for it
	found := f.clock.Now()
	f.setChains(&drill.ChainCheck{CheckedAt: metav1.NewTime(found), Findings: []drill.ChainFinding{
		{Etcd: "etcd-main", Reason: drill.ReasonChainBroken, Key: keys[3], Detail: "gap: revisions 21 to 30 are in no snapshot"},
	}})
	o := f.reconcile()
	if o.cond.Status != gardencorev1beta1.ConditionFalse || o.cond.Reason != string(drill.ReasonChainBroken) || !strings.Contains(o.cond.Message, "found by names") {
		t.Fatalf("condition %+v", o.cond)
	}
	if f.faults.Calls(memstore.OpOpenObject) != 0 || f.faults.Calls(memstore.OpListObjects) != 0 || f.restores.Load() != 0 {
		t.Errorf("the report by names read the store: %d gets, %d listings, %d restores",
			f.faults.Calls(memstore.OpOpenObject), f.faults.Calls(memstore.OpListObjects), f.restores.Load())
	}
	if e := o.drill.Etcds[0]; !e.ByNames || e.Name != "etcd-main" || len(o.drill.Etcds) != 1 {
		t.Errorf("drill status %+v", o.drill)
	}
	if v := testValue(t); v != 0 {
		t.Errorf("entry_restorable %v", v)
	}
	if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "Warning "+EventNotRestorable) {
		t.Errorf("events %q", ev)
	}
	// Reported once: the next look changes nothing.
	if o = f.reconcile(); len(f.events()) != 0 || f.restores.Load() != 0 {
		t.Errorf("reported again: %+v", o.cond)
	}

	// The missing delta is back and the next inventory finds nothing: drilled at once.
	f.putRaw(gap, withHash([]byte("[]")))
	f.setChains(nil)
	if o = f.reconcile(); o.cond.Status != gardencorev1beta1.ConditionTrue || f.restores.Load() != 2 {
		t.Fatalf("after the chain healed: %+v, %d restores", o.cond, f.restores.Load())
	}
}

func TestChainsChangedPredicate(t *testing.T) {
	with := func(raw string) *extensionsv1alpha1.BackupEntry {
		be := entry(entryName)
		if raw != "" {
			be.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(raw)}
		}
		return be
	}
	const a = `{"chains":{"checkedAt":"2026-11-25T10:00:00Z","findings":[{"etcd":"etcd-main","reason":"ChainBroken","detail":"gap"}]}}`
	for _, c := range []struct {
		old, new string
		want     bool
	}{
		{"", a, true},
		{a, "", true},
		{a, a, false},
		{`{"inventory":{"objects":1}}`, `{"inventory":{"objects":2}}`, false},
	} {
		if got := chainsChanged().Update(event.UpdateEvent{ObjectOld: with(c.old), ObjectNew: with(c.new)}); got != c.want {
			t.Errorf("%s -> %s: %t, want %t", c.old, c.new, got, c.want)
		}
	}
}

// Findings by names after a drill whose listing failed: the inventory's listing succeeded since,
// and its findings are the verdict (False), not the failed listing's Unknown.
func TestChainFindingsAfterAFailedDrill(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.faults.Fail(memstore.OpListObjects, errors.New("connection reset"))
	f.toFirstDrill()
	if o := f.reconcile(); o.cond.Reason != ReasonDrillFailed {
		t.Fatalf("condition %+v", o.cond)
	}
	f.setChains(&drill.ChainCheck{CheckedAt: metav1.NewTime(f.clock.Now()), Findings: []drill.ChainFinding{
		{Etcd: "etcd-main", Reason: drill.ReasonChainBroken, Detail: "gap"},
	}})
	if o := f.reconcile(); o.cond.Status != gardencorev1beta1.ConditionFalse || o.cond.Reason != string(drill.ReasonChainBroken) {
		t.Fatalf("condition %+v", o.cond)
	}
}
