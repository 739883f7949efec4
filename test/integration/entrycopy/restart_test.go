// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestRestartReconcilesOnlyMissedRolls: after a move (copy.serve copy, every Etcd rolled onto the
// copy) each entry records the Etcd container its etcd-backup was decided for. A new process
// reconciles only the entry whose Etcd gardenlet rolled while no process watched (here back onto
// the primary: its etcd-backup takes the primary's credentials), not the entries whose Etcd
// still names the bucket their etcd-backup was decided for.
func TestRestartReconcilesOnlyMissedRolls(t *testing.T) {
	ctx := context.Background()
	r := startServing(t, ctx, "rs-")
	env, bb, copyBucket := r.env, r.bb, r.copyBucket
	rolled, kept := r.entryOn(t, "aws"), r.entryOn(t, "aws")
	for _, be := range []*extensionsv1alpha1.BackupEntry{rolled, kept} {
		shoot := strings.TrimSuffix(be.Name, "--1")
		rollEtcd(t, env, shoot, be, bb.Name)
		setEntryConfig(t, env, be, r.withCopy("copy"))
		waitCredentials(t, env, shoot, copyBucket, r.primary.Endpoint, "the move pending: the copy's name, the primary's credentials")
		rollEtcd(t, env, shoot, be, copyBucket)
		waitCredentials(t, env, shoot, copyBucket, r.second.Endpoint, "moved: the copy's credentials")
		env.WaitFor(t, be, time.Minute, "the Etcd container recorded", func(obj extensionsv1alpha1.Object) bool {
			ps, err := entryinfo.ReadProviderStatus(obj.(*extensionsv1alpha1.BackupEntry))
			return err == nil && ps.EtcdContainer == copyBucket
		})
	}
	r.bin.Ext.Stop()
	before := current(t, env, kept).Status.LastOperation.LastUpdateTime

	// While no process watches, gardenlet rolls one shoot's Etcd back onto the primary.
	rolledShoot := strings.TrimSuffix(rolled.Name, "--1")
	rollEtcd(t, env, rolledShoot, rolled, bb.Name)
	restart := time.Now()
	ext, err := stack.StartExtension(ctx, r.bin.TestEnv, r.bin.Path, t.TempDir(), "--entry-copy-interval", "2s")
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Stop()
	waitCredentials(t, env, rolledShoot, copyBucket, r.primary.Endpoint, "a roll missed while down: the credentials follow the Etcd")
	env.WaitFor(t, rolled, time.Minute, "the rolled entry reconciled by the new process", framework.SucceededAfter(restart))
	// The controller starts its workers only once its watches have handled their initial lists,
	// so every entry the Etcds' first events enqueued was queued before the rolled entry's
	// reconcile; once the controller is idle, each was reconciled. The other entry, whose Etcd
	// names what its etcd-backup was decided for, was not.
	waitIdle(t, ext.MetricsURL, "backupentry")
	if after := current(t, env, kept).Status.LastOperation.LastUpdateTime; !after.Equal(&before) {
		t.Errorf("the entry whose Etcd did not roll was reconciled at the start (last operation %v, before %v)", after, before)
	}
	holdsCredentials(t, env, strings.TrimSuffix(kept.Name, "--1"), copyBucket, r.second.Endpoint, "the entry whose Etcd did not roll")
}

// current is be as the API server holds it now.
func current(t *testing.T, env *framework.Env, be *extensionsv1alpha1.BackupEntry) *extensionsv1alpha1.BackupEntry {
	t.Helper()
	cur := &extensionsv1alpha1.BackupEntry{}
	if err := env.K8s.Get(framework.Ctx(t), client.ObjectKeyFromObject(be), cur); err != nil {
		t.Fatal(err)
	}
	return cur
}

// waitIdle waits until controller's work queue is empty and none of its workers works, as the
// process's metrics endpoint metricsURL says (workqueue_depth over its priorities,
// controller_runtime_active_workers).
func waitIdle(t *testing.T, metricsURL, controller string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		m := framework.ScrapeMetrics(t, metricsURL)
		workers := m.Get("controller_runtime_active_workers", map[string]string{"controller": controller})
		depth := m.Get("workqueue_depth", map[string]string{"name": controller})
		idle := len(workers) == 1 && len(depth) > 0
		for _, s := range append(workers, depth...) {
			idle = idle && s.Value == 0
		}
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %s controller not idle within a minute: active workers %v, queue depth %v", controller, workers, depth)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
