// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// drillMemoryHeadroom is what the drill's cgroup allows above the drill process's own use once it
// is ready: far below what the restore child needs for oomKeys keys (etcd's in-memory index of
// them, built when the embedded etcd starts on the restored database).
const (
	drillMemoryHeadroom = 48 << 20
	oomKeys             = 400_000
	// drillReadRate makes the download of that snapshot take seconds: the window in which the
	// test kills the drill's process during a drill.
	drillReadRate = 8 << 20
)

// TestADrillOutOfMemoryLeavesTheControllersServing runs the binary twice, as the chart does: the
// controllers (--controllers=core) and the restore drill (--controllers=restore-drill), the
// drill's process in a memory cgroup of its own, the stand-in for the drill container's memory
// limit. The entry's newest full snapshot (a real etcd's, oomKeys keys) needs more memory to
// restore than the cgroup leaves.
//
//   - The kernel's OOM killer kills the restore child at the cgroup's limit (cgroup v1 here: it
//     kills one process): BackupsRestorable is Unknown/DrillInterrupted, saying the restore was
//     killed, never True or False.
//   - On cgroup v2 the kubelet's container is killed whole (memory.oom.group): the stand-in kills
//     every process of the cgroup while a drill runs (the entry carries the drill's mark), and
//     starts the drill process again, as the kubelet restarts the container. The new process
//     reports the drill interrupted (Unknown/DrillInterrupted, "ended with its process").
//
// Meanwhile the controllers' process, outside the cgroup, keeps reconciling: a BackupEntry
// created after each kill reaches Succeeded, and the process the test started once (nothing
// here restarts it) still answers.
func TestADrillOutOfMemoryLeavesTheControllersServing(t *testing.T) {
	cg := memoryCgroup(t)
	ctx := context.Background()
	dir := t.TempDir()
	s := startDrillStack(t, ctx, dir, "--controllers=core", "--entry-inventory-interval", "0s")
	bin, env, core, data := s.bin, s.env, s.bin.Ext, s.data
	bb := s.bucket(t, "oom-")
	shoot := framework.UniqueName("shoot--oom--")
	entry := shoot + "--1"
	be := s.entry(t, entry, bb.Name)
	putLargeFullSnapshot(t, ctx, env.StoreFor(t, data), bb.Name, entry)

	// The drill's process, moved into the cgroup by a wrapper before it executes the binary.
	wrapper := filepath.Join(dir, "drill-in-cgroup")
	script := fmt.Sprintf("#!/bin/sh\necho $$ > %s/cgroup.procs || exit 1\nexec %s \"$@\"\n", cg, bin.Path)
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	startDrill := func() {
		t.Helper()
		writeCgroup(t, cg, "memory.limit_in_bytes", "-1") // the start is not what is limited
		d, err := stack.StartExtension(ctx, bin.TestEnv, wrapper, t.TempDir(), "--controllers=restore-drill",
			"--restore-drill-interval", "20s", "--restore-drill-scratch-dir", scratch, "--restore-drill-read-rate", strconv.Itoa(drillReadRate))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			d.Kill()
			if t.Failed() {
				if log, err := os.ReadFile(d.LogPath); err == nil {
					t.Logf("drill log:\n%s", log)
				}
				t.Logf("drill cgroup: max usage %d MiB, oom_kill %d", readCgroupInt(t, cg, "memory.max_usage_in_bytes")>>20, oomKills(t, cg))
			}
		})
		used := readCgroupInt(t, cg, "memory.usage_in_bytes")
		writeCgroup(t, cg, "memory.limit_in_bytes", strconv.FormatInt(used+drillMemoryHeadroom, 10))
		t.Logf("drill process ready, %d MiB used; its cgroup's limit %d MiB", used>>20, (used+drillMemoryHeadroom)>>20)
	}
	startDrill()
	pids := cgroupPIDs(t, cg)

	// The restore child is killed at the limit; the drill's process lives and says so.
	env.WaitFor(t, be, 3*time.Minute, "BackupsRestorable Unknown/DrillInterrupted (restore killed)", func(obj extensionsv1alpha1.Object) bool {
		c := v1beta1helper.GetCondition(obj.(*extensionsv1alpha1.BackupEntry).Status.Conditions, restoredrill.ConditionBackupsRestorable)
		return c != nil && c.Reason == restoredrill.ReasonDrillInterrupted && strings.Contains(c.Message, "restore process killed")
	})
	if kills := oomKills(t, cg); kills < 1 {
		t.Errorf("the cgroup's oom_kill is %d; want the kernel's OOM killer to have acted", kills)
	}
	checkNotRestorable(t, be)
	if now := cgroupPIDs(t, cg); now[0] != pids[0] {
		t.Errorf("the drill's process %v is gone (now %v): only its restore child was to die", pids, now)
	}
	checkServing(t, env, core, bb.Name, data, shoot, "-2")

	// cgroup v2's whole-container kill: every process of the cgroup killed while a drill runs.
	// The limit is lifted meanwhile, so that the kill is the test's, not a child's OOM that
	// the drill's process would report first.
	writeCgroup(t, cg, "memory.limit_in_bytes", "-1")
	started := waitDrillStarted(t, env, be)
	killCgroup(t, cg)
	startDrill()
	env.WaitFor(t, be, 2*time.Minute, "BackupsRestorable Unknown/DrillInterrupted (process ended)", func(obj extensionsv1alpha1.Object) bool {
		c := v1beta1helper.GetCondition(obj.(*extensionsv1alpha1.BackupEntry).Status.Conditions, restoredrill.ConditionBackupsRestorable)
		return c != nil && c.Reason == restoredrill.ReasonDrillInterrupted && strings.Contains(c.Message, "ended with its process") &&
			strings.Contains(c.Message, started.UTC().Format(time.RFC3339))
	})
	checkNotRestorable(t, be)
	checkServing(t, env, core, bb.Name, data, shoot, "-3")
}

// checkNotRestorable: the entry's verdict is Unknown, and its drill status says nothing restored.
func checkNotRestorable(t *testing.T, be *extensionsv1alpha1.BackupEntry) {
	t.Helper()
	c := v1beta1helper.GetCondition(be.Status.Conditions, restoredrill.ConditionBackupsRestorable)
	if c.Status != gardencorev1beta1.ConditionUnknown {
		t.Errorf("BackupsRestorable %s; want Unknown", c.Status)
	}
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil || ps.Drill == nil {
		t.Fatalf("providerStatus.drill %+v (%v)", ps.Drill, err)
	}
	for _, e := range ps.Drill.Etcds {
		if e.Restorable != string(gardencorev1beta1.ConditionUnknown) {
			t.Errorf("etcd %s restorable %s; want Unknown", e.Name, e.Restorable)
		}
	}
	t.Logf("BackupsRestorable %s/%s: %s", c.Status, c.Reason, c.Message)
}

// checkServing: the controllers' process, started once by this test, is alive and reconciles a
// new BackupEntry to Succeeded.
func checkServing(t *testing.T, env *framework.Env, core *stack.Extension, bucket string, data map[string][]byte, shoot, suffix string) {
	t.Helper()
	fresh := env.CreateEntry(t, shoot+suffix, bucket, data)
	env.WaitFor(t, fresh, time.Minute, "a new entry reconciled by the controllers", framework.Succeeded)
	if _, err := stack.Get(framework.Ctx(t), core.HealthURL+"/healthz"); err != nil {
		t.Errorf("the controllers' process does not answer: %v", err)
	}
}

// waitDrillStarted waits until a drill of be runs (its mark on the entry) and returns its start.
func waitDrillStarted(t *testing.T, env *framework.Env, be *extensionsv1alpha1.BackupEntry) time.Time {
	t.Helper()
	var started time.Time
	env.WaitFor(t, be, 2*time.Minute, "a drill running (providerStatus.drillStarted)", func(obj extensionsv1alpha1.Object) bool {
		ps, err := entryinfo.ReadProviderStatus(obj.(*extensionsv1alpha1.BackupEntry))
		if err != nil || ps.DrillStarted == nil {
			return false
		}
		started = ps.DrillStarted.Time
		return true
	})
	return started
}

// putLargeFullSnapshot writes oomKeys keys into a real etcd and stores its snapshot as the entry's
// newest full snapshot of etcd-main, as etcd-backup-restore names one (uncompressed).
func putLargeFullSnapshot(t *testing.T, ctx context.Context, store interface {
	PutObject(context.Context, string, string, []byte) error
}, bucket, entry string) {
	t.Helper()
	db := stack.StartEtcd(t, filepath.Join(t.TempDir(), "etcd"))
	defer db.Stop()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{db.URL}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var rev int64
	const batch = 128 // etcd's --max-txn-ops
	for i := 0; i < oomKeys; i += batch {
		ops := make([]clientv3.Op, 0, batch)
		for j := i; j < min(i+batch, oomKeys); j++ {
			ops = append(ops, clientv3.OpPut(fmt.Sprintf("/registry/configmaps/ns%03d/cm-%07d", j%500, j), strings.Repeat("v", 64)))
		}
		resp, err := cli.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	rc, err := cli.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	// etcd's snapshot stream ends with the SHA-256 of what precedes it, as etcd-backup-restore
	// stores it.
	key := fmt.Sprintf("%s/etcd-main/v2/Full-00000000-%08d-%d", entry, rev, time.Now().Unix())
	if err := store.PutObject(framework.Ctx(t), bucket, key, snap); err != nil {
		t.Fatal(err)
	}
	t.Logf("full snapshot %s: %d keys, %d MiB", key, oomKeys, len(snap)>>20)
}

// memoryCgroup is a new memory cgroup (v1) under this process's own, removed at the end, or the
// test is skipped where none can be made (no memory controller of v1 here, no write access).
func memoryCgroup(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	defer f.Close()
	var own string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if parts := strings.SplitN(sc.Text(), ":", 3); len(parts) == 3 && parts[1] == "memory" {
			own = parts[2]
		}
	}
	if own == "" {
		t.Skip("no cgroup v1 memory controller for this process (a cgroup v2 host needs memory delegated to the test's cgroup)")
	}
	var name [4]byte
	_, _ = rand.Read(name[:])
	cg := filepath.Join("/sys/fs/cgroup/memory", own, "drill-oom-"+hex.EncodeToString(name[:]))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup: %v", err)
	}
	t.Cleanup(func() {
		killCgroup(t, cg)
		for range 50 {
			if err := os.Remove(cg); err == nil || os.IsNotExist(err) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("memory cgroup %s left behind", cg)
	})
	if _, err := os.Stat(filepath.Join(cg, "memory.memsw.limit_in_bytes")); err == nil {
		t.Logf("swap accounting on: the limit also bounds swap only where memory.memsw is set; this host's swap: %s", swaps())
	}
	return cg
}

func swaps() string {
	b, _ := os.ReadFile("/proc/swaps")
	if lines := strings.Count(strings.TrimSpace(string(b)), "\n"); lines == 0 {
		return "none"
	}
	return strings.TrimSpace(string(b))
}

func writeCgroup(t *testing.T, cg, file, value string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(cg, file), []byte(value), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readCgroupInt(t *testing.T, cg, file string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cg, file))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// oomKills is the cgroup's count of processes the OOM killer killed (memory.oom_control).
func oomKills(t *testing.T, cg string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cg, "memory.oom_control"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "oom_kill "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatalf("no oom_kill in %s", b)
	return 0
}

func cgroupPIDs(t *testing.T, cg string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		pids = append(pids, 0)
	}
	return pids
}

// killCgroup kills every process of the cgroup with SIGKILL, as cgroup v2's memory.oom.group has
// the kernel do at the container's limit, and waits until none is left.
func killCgroup(t *testing.T, cg string) {
	t.Helper()
	for range 100 {
		pids := cgroupPIDs(t, cg)
		if pids[0] == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("processes %v of %s survived SIGKILL", cgroupPIDs(t, cg), cg)
}
