// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinventory

import (
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// seeded makes the fixture's provider a Seeded (as the binaries run it), with no seed
// configuration in force yet.
func (f *inventoryFixture) seeded() *provider.Seeded {
	f.t.Helper()
	s, err := provider.WithSeedConfig(provider.Register(controllertest.Provider{Store: f.store}), nil, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.inventoryTaker.Provider = s
	return s
}

// The seed's backupFreshness judges an entry without a providerConfig (gardenlet copies none
// when the shoot's spec.backup has none).
func TestTheSeedConfigurationsFreshnessJudgesAnEntryWithoutProviderConfig(t *testing.T) {
	f := newInventoryFixture(t, entryName, cluster(false))
	seeded := f.seeded()
	if err := seeded.Apply([]byte(`{"backupFreshness":{"deltaSnapshotMaxAge":"10m"}}`), "spec.extensions[0].providerConfig"); err != nil {
		t.Fatal(err)
	}
	f.toFirstCount()
	f.snapshot("Full", f.clock.Now())
	f.clock.Step(20 * time.Minute) // stale by the seed's 10m, fresh by the default 1h
	f.clock.Step(inventoryInterval)
	cond, _, _ := f.reconcile(entryName)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionFalse {
		t.Fatalf("a 20m old snapshot with the seed's deltaSnapshotMaxAge of 10m: %+v", cond)
	}
}

// While the seed configuration is awaited, nothing is judged with the defaults: BackupsFresh says
// so, the metric keeps the last verdict, and the entry is looked at again soon.
func TestNoVerdictWhileTheSeedConfigurationIsAwaited(t *testing.T) {
	f := newInventoryFixture(t, entryName, cluster(false))
	seeded := f.seeded()
	if err := seeded.Apply([]byte(`{"backupFreshness":{"deltaSnapshotMaxAge":"10m"}}`), "spec.extensions[0].providerConfig"); err != nil {
		t.Fatal(err)
	}
	f.toFirstCount()
	f.snapshot("Full", f.clock.Now())
	f.clock.Step(20*time.Minute + inventoryInterval)
	if cond, _, _ := f.reconcile(entryName); cond == nil || cond.Status != gardencorev1beta1.ConditionFalse {
		t.Fatalf("before the wait: %+v", cond)
	}
	for len(f.recorder.Events) > 0 {
		<-f.recorder.Events
	}

	series := testutil.CollectAndCount(metrics.BackupsFresh)
	seeded.Await("the seed's Extension is not applied yet")
	f.clock.Step(inventoryInterval)
	cond, _, requeue := f.reconcile(entryName)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != "SeedConfigPending" {
		t.Fatalf("while the seed configuration is awaited: %+v", cond)
	}
	if requeue <= 0 || requeue > time.Minute {
		t.Errorf("looked at again in %s; want soon", requeue)
	}
	if got := testutil.CollectAndCount(metrics.BackupsFresh); got != series {
		t.Errorf("entry_backups_fresh has %d series, had %d: the last verdict's was dropped", got, series)
	}
	if got := backupsFresh(t); got != 0 {
		t.Errorf("entry_backups_fresh = %v; want the last verdict's 0", got)
	}
}
