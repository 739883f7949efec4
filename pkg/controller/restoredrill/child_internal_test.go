// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/snapshotname"
)

// childArg, followed by a mode, makes the test binary, re-executed, act as the restore process:
// run (RunChild), panic (in a goroutine of its own, as etcd's would), kill (SIGKILL itself, as
// the OOM killer does), hang (until killed), report (what it was given, see childGot). The mode
// is an argument, not a variable: the child is started with the environment ChildRestorer gives
// it, which is empty.
const childArg = "restoredrill-child="

func childMode() string {
	for _, a := range os.Args[1:] {
		if mode, ok := strings.CutPrefix(a, childArg); ok {
			return mode
		}
	}
	return ""
}

func TestMain(m *testing.M) {
	switch childMode() {
	case "":
		os.Exit(m.Run())
	case "run":
		if err := RunChildProcess(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "panic":
		go func() { panic("bbolt: page 7 already freed (test)") }()
		time.Sleep(time.Hour)
	case "kill":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour)
	case "hang":
		time.Sleep(time.Hour)
	case "report":
		report()
		os.Exit(0)
	}
	os.Exit(3)
}

func child(mode string) ChildRestorer {
	return ChildRestorer{Path: os.Args[0], Args: []string{"-test.run=^$", childArg + mode}}
}

// childGot is what a child started by ChildRestorer was given.
type childGot struct {
	Env        []string `json:"env"`
	FDs        []string `json:"fds"` // open file descriptors, each with what it is
	Dir        string   `json:"dir"`
	NoNewPrivs string   `json:"noNewPrivs"`
}

// report confines itself as RunChildProcess does, then reports what it was given as the
// childResult's error (the one free-text field the parent passes on).
func report() {
	var got childGot
	err := confineChild()
	got.Env = os.Environ()
	got.Dir, _ = os.Getwd()
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		if target == "/proc/"+strconv.Itoa(os.Getpid())+"/fd" {
			continue // the listing's own
		}
		got.FDs = append(got.FDs, e.Name()+" "+target)
	}
	if status, rerr := os.ReadFile("/proc/self/status"); rerr == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "NoNewPrivs:"); ok {
				got.NoNewPrivs = strings.TrimSpace(v)
			}
		}
	}
	b, _ := json.Marshal(got)
	res := childResult{Error: string(b)}
	if err != nil {
		res.Error = err.Error()
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}

// fetched writes a chain's files as FetchAndRestore leaves them: a full snapshot that is 512
// bytes of zeros with its hash (no database etcd can open) and no deltas.
func fetched(t *testing.T) (drill.Chain, string) {
	t.Helper()
	dir := t.TempDir()
	db := make([]byte, 512)
	sum := sha256.Sum256(db)
	if err := os.WriteFile(filepath.Join(dir, "full.db"), append(db, sum[:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	full := drill.Snapshot{Key: entryName + "/etcd-main/v2/Full-00000000-00000010-1", Name: snapshotname.Name{Etcd: "etcd-main", Kind: drill.KindFull, LastRevision: 10}}
	return drill.Chain{Etcd: "etcd-main", Full: &full}, dir
}

// noDeltas is a stream of deltas that ends at once.
func noDeltas(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { r.Close() })
	return r
}

func TestChildRestorer(t *testing.T) {
	cases := []struct {
		mode    string
		reason  drill.Reason // "" : no finding
		message string
	}{
		// The real child: etcd's restore refuses a database it cannot open, reported as JSON.
		{"run", drill.ReasonRestoreFailed, "etcd's snapshot restore"},
		// A crash in etcd's goroutines: the child dies, the parent (this test) lives.
		{"panic", drill.ReasonRestoreFailed, "panic: bbolt: page 7 already freed (test)"},
		// Killed (out of memory): nothing proven.
		{"kill", "", "killed"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			ch, dir := fetched(t)
			r := child(c.mode).Restore(context.Background(), ch, dir, noDeltas(t))
			if r.Err == nil || drill.ReasonOf(r.Err) != c.reason || !strings.Contains(r.Err.Error(), c.message) {
				t.Fatalf("error %v (reason %q), want reason %q with %q", r.Err, drill.ReasonOf(r.Err), c.reason, c.message)
			}
			if r.Etcd != "etcd-main" || r.Full != ch.Full.Key {
				t.Errorf("result %+v", r)
			}
		})
	}
}

// A restore cut off by the drill's context is no finding, and the child does not outlive it.
func TestChildRestorerCanceled(t *testing.T) {
	ch, dir := fetched(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	r := child("hang").Restore(ctx, ch, dir, noDeltas(t))
	if r.Err == nil || drill.ReasonOf(r.Err) != "" || !strings.Contains(r.Err.Error(), "canceled") {
		t.Fatalf("error %v", r.Err)
	}
}

// A reconcile whose restore process crashes publishes RestoreFailed, and the scratch directory
// is removed all the same (the fixture checks it after every reconcile).
func TestReconcileWithCrashingRestoreProcess(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.restore = child("panic").Restore
	f.toFirstDrill()
	o := f.reconcile()
	if o.cond.Status != gardencorev1beta1.ConditionFalse || o.cond.Reason != string(drill.ReasonRestoreFailed) || !strings.Contains(o.cond.Message, "panic:") {
		t.Fatalf("condition %+v", o.cond)
	}
}

// TestChildGetsOnlyWhatTheRestoreNeeds: the restore process parses bytes a shoot controls, so it
// gets none of the controller's environment (a variable set in this process, as a deployment
// sets credentials, does not reach it: issue 36), no file descriptor of the controller's but the
// job, its two output pipes and the deltas (not one the controller inherited without
// close-on-exec), the scratch directory as its working directory, and no_new_privs.
func TestChildGetsOnlyWhatTheRestoreNeeds(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "controller-secret")
	// A descriptor the controller inherited from whatever started it: not close-on-exec.
	canary := filepath.Join(t.TempDir(), "inherited")
	if err := os.WriteFile(canary, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(canary, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	ch, dir := fetched(t)
	r := child("report").Restore(context.Background(), ch, dir, noDeltas(t))
	msg, ok := strings.CutPrefix(fmt.Sprint(r.Err), "restore process: ")
	var got childGot
	if !ok || json.Unmarshal([]byte(msg), &got) != nil {
		t.Fatalf("no report from the child: %v", r.Err)
	}
	if len(got.Env) != 0 {
		t.Errorf("the child's environment is %q; want it empty", got.Env)
	}
	// Besides 0-3 the child holds only what its own runtime opened (its poller, cgroup files).
	for _, want := range []string{"0 pipe:", "1 pipe:", "2 pipe:", "3 pipe:"} {
		if !slices.ContainsFunc(got.FDs, func(fd string) bool { return strings.HasPrefix(fd, want) }) {
			t.Errorf("the child's file descriptors %q lack %s...", got.FDs, want)
		}
	}
	if slices.ContainsFunc(got.FDs, func(fd string) bool { return strings.HasSuffix(fd, " "+canary) }) {
		t.Errorf("the child inherited the controller's descriptor of %s: %q", canary, got.FDs)
	}
	if got.Dir != dir {
		t.Errorf("the child's working directory is %q; want the scratch directory %q", got.Dir, dir)
	}
	if runtime.GOOS == "linux" && got.NoNewPrivs != "1" {
		t.Errorf("the child's NoNewPrivs is %q; want 1", got.NoNewPrivs)
	}
}
