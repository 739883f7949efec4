package restoredrill

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/snapshotname"
)

// childEnv makes the test binary, re-executed, act as the restore process: run (RunChild),
// panic (in a goroutine of its own, as etcd's would), kill (SIGKILL itself, as the OOM killer
// does), hang (until killed).
const childEnv = "GEB_RESTOREDRILL_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
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
	}
	os.Exit(3)
}

func child(mode string) ChildRestorer {
	return ChildRestorer{Path: os.Args[0], Args: []string{"-test.run=^$"}, Env: append(os.Environ(), childEnv+"="+mode)}
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
