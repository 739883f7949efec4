// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package drill

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/snapshotname"
)

// childArg, followed by a mode, makes the test binary, re-executed, act as the restore process:
// run (RunChildProcess), run-without-landlock (the same on a kernel whose Landlock probe fails),
// panic (in a goroutine of its own, as etcd's would), kill (SIGKILL itself, as the OOM killer
// does), hang (until killed), report (what it was given and what it may touch, see childGot).
// The mode is an argument, not a variable: the child is started with the environment
// ChildRestorer gives it, which is empty. plantArg names the files report tries outside its
// directory.
const (
	childArg = "drill-child="
	plantArg = "drill-plant="
)

func childFlag(prefix string) string {
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			return v
		}
	}
	return ""
}

func TestMain(m *testing.M) {
	switch childFlag(childArg) {
	case "":
		os.Exit(m.Run())
	case "run":
		exitWith(RunChildProcess(context.Background()))
	case "run-without-landlock":
		exitWith(runChildProcess(context.Background(), func() (int, error) { return 0, syscall.ENOSYS }))
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

func exitWith(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func child(mode string, args ...string) ChildRestorer {
	return ChildRestorer{Path: os.Args[0], Args: append([]string{"-test.run=^$", childArg + mode}, args...)}
}

// childGot is what a child started by ChildRestorer was given, and what it could do once
// confined.
type childGot struct {
	Env        []string `json:"env"`
	FDs        []string `json:"fds"` // open file descriptors, each with what it is
	Dir        string   `json:"dir"`
	NoNewPrivs string   `json:"noNewPrivs"`
	Unconfined string   `json:"unconfined"`
	// Read is the outcome of reading the planted file outside the directory ("" : read);
	// WriteOutside of creating a file beside it, WriteInside of one in the directory;
	// Connect of a TCP connection to the test's listener.
	Read, WriteOutside, WriteInside, Connect string
}

// report confines itself as RunChildProcess does, then reports what it was given and could do
// as the childResult's error (the one free-text field the parent passes on).
func report() {
	var got childGot
	got.Dir, _ = os.Getwd()
	unconfined, err := confineChild(got.Dir, landlockABI)
	got.Unconfined = unconfined
	got.Env = os.Environ()
	// Asked of the kernel directly: /proc/self is no more readable, confined.
	for fd := range 1024 {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil {
			continue
		}
		kind := fmt.Sprintf("file %d:%d", st.Dev, st.Ino)
		if st.Mode&syscall.S_IFMT == syscall.S_IFIFO {
			kind = "pipe"
		}
		got.FDs = append(got.FDs, fmt.Sprintf("%d %s", fd, kind))
	}
	if v, perr := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); perr == nil {
		got.NoNewPrivs = strconv.Itoa(v)
	}
	outcome := func(err error) string {
		if err != nil {
			return err.Error()
		}
		return ""
	}
	if plant := childFlag(plantArg); plant != "" {
		_, rerr := os.ReadFile(plant)
		got.Read = outcome(rerr)
		got.WriteOutside = outcome(os.WriteFile(plant+".written", []byte("x"), 0o600))
	}
	got.WriteInside = outcome(os.WriteFile(filepath.Join(got.Dir, "written"), []byte("x"), 0o600))
	if addr := childFlag("drill-connect="); addr != "" {
		c, cerr := net.DialTimeout("tcp", addr, 5*time.Second)
		if cerr == nil {
			c.Close()
		}
		got.Connect = outcome(cerr)
	}
	b, _ := json.Marshal(got)
	res := childResult{Error: string(b)}
	if err != nil {
		res.Error = err.Error()
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}

// reported runs a report child with args in a new scratch directory and returns what it said.
func reported(t *testing.T, args ...string) (childGot, string) {
	t.Helper()
	ch, dir := fetched(t)
	r := child("report", args...).Restore(context.Background(), ch, dir, noDeltas(t))
	msg, ok := strings.CutPrefix(fmt.Sprint(r.Err), "restore process: ")
	var got childGot
	if !ok || json.Unmarshal([]byte(msg), &got) != nil {
		t.Fatalf("no report from the child: %v", r.Err)
	}
	return got, dir
}

// fetched writes a chain's files as FetchAndRestore leaves them: a full snapshot that is 512
// bytes of zeros with its hash (no database etcd can open) and no deltas.
func fetched(t *testing.T) (Chain, string) {
	t.Helper()
	dir := t.TempDir()
	db := make([]byte, 512)
	sum := sha256.Sum256(db)
	if err := os.WriteFile(filepath.Join(dir, fullFile), append(db, sum[:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	full := Snapshot{Key: entry + "etcd-main/v2/Full-00000000-00000010-1", Name: snapshotname.Name{Etcd: "etcd-main", Kind: KindFull, LastRevision: 10}}
	return Chain{Etcd: "etcd-main", Full: &full}, dir
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
		reason  Reason // "" : no finding
		message string
	}{
		// The real child: etcd's restore refuses a database it cannot open, reported as JSON.
		{"run", ReasonRestoreFailed, "etcd's snapshot restore"},
		// A crash in etcd's goroutines: the child dies, the parent (this test) lives.
		{"panic", ReasonRestoreFailed, "panic: bbolt: page 7 already freed (test)"},
		// Killed (out of memory): nothing proven.
		{"kill", "", "killed"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			ch, dir := fetched(t)
			r := child(c.mode).Restore(context.Background(), ch, dir, noDeltas(t))
			if r.Err == nil || ReasonOf(r.Err) != c.reason || !strings.Contains(r.Err.Error(), c.message) {
				t.Fatalf("error %v (reason %q), want reason %q with %q", r.Err, ReasonOf(r.Err), c.reason, c.message)
			}
			if r.Etcd != "etcd-main" || r.Full != ch.Full.Key {
				t.Errorf("result %+v", r)
			}
			if killed := errors.Is(r.Err, ErrRestoreKilled); killed != (c.mode == "kill") {
				t.Errorf("errors.Is(%v, ErrRestoreKilled) = %t; want it for a killed child only", r.Err, killed)
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
	if r.Err == nil || ReasonOf(r.Err) != "" || !strings.Contains(r.Err.Error(), "canceled") {
		t.Fatalf("error %v", r.Err)
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
	got, dir := reported(t)
	if len(got.Env) != 0 {
		t.Errorf("the child's environment is %q; want it empty", got.Env)
	}
	// Besides 0-3 the child holds only what its own runtime opened (its poller, cgroup files).
	for _, want := range []string{"0 pipe", "1 pipe", "2 pipe", "3 pipe"} {
		if !slices.ContainsFunc(got.FDs, func(fd string) bool { return strings.HasPrefix(fd, want) }) {
			t.Errorf("the child's file descriptors %q lack %s...", got.FDs, want)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(canary, &st); err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(got.FDs, func(fd string) bool { return strings.HasSuffix(fd, fmt.Sprintf(" file %d:%d", st.Dev, st.Ino)) }) {
		t.Errorf("the child inherited the controller's descriptor of %s: %q", canary, got.FDs)
	}
	if got.Dir != dir {
		t.Errorf("the child's working directory is %q; want the scratch directory %q", got.Dir, dir)
	}
	if runtime.GOOS == "linux" && got.NoNewPrivs != "1" {
		t.Errorf("the child's NoNewPrivs is %q; want 1", got.NoNewPrivs)
	}
}

// TestChildIsConfinedToItsDirectory: with Landlock, the child cannot read a file outside its
// directory that its uid may read (a planted service-account token), cannot create one beside
// it, and cannot open a TCP connection (a listener of this process on localhost); it can write
// in its directory.
func TestChildIsConfinedToItsDirectory(t *testing.T) {
	if _, err := landlockABI(); err != nil {
		t.Skipf("this kernel offers no Landlock: %v (the path without it: TestChildWithoutLandlockSaysSo)", err)
	}
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("service-account-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, dir := reported(t, plantArg+token, "drill-connect="+l.Addr().String())
	if got.Unconfined != "" {
		t.Fatalf("the child says it is unconfined: %s", got.Unconfined)
	}
	if !strings.Contains(got.Read, "permission denied") {
		t.Errorf("reading %s outside the child's directory: %q; want permission denied", token, got.Read)
	}
	if !strings.Contains(got.WriteOutside, "permission denied") {
		t.Errorf("writing beside %s: %q; want permission denied", token, got.WriteOutside)
	}
	if _, err := os.Stat(token + ".written"); err == nil {
		t.Errorf("the child wrote %s.written", token)
	}
	if got.WriteInside != "" {
		t.Errorf("writing in its directory %s: %s", dir, got.WriteInside)
	}
	if !strings.Contains(got.Connect, "permission denied") {
		t.Errorf("connecting to %s: %q; want permission denied", l.Addr(), got.Connect)
	}
}

// TestChildRestoresARealChainConfined: a real chain (a full snapshot and 3 deltas of a real
// etcd) restores through the child, confined, to its last revision and key count.
func TestChildRestoresARealChainConfined(t *testing.T) {
	f := newChain(t, ".gz")
	r, _ := drill(t, store(t, f.objects), Options{Restore: child("run").Restore})
	if r.Err != nil || r.Revision != f.lastRev || r.Keys != int64(len(f.want)) {
		t.Fatalf("result %+v, want revision %d and %d keys", r, f.lastRev, len(f.want))
	}
	if _, err := landlockABI(); err == nil && r.Unconfined != "" {
		t.Errorf("the child ran unconfined on a kernel with Landlock: %s", r.Unconfined)
	}
}

// TestChildWithoutLandlockSaysSo: on a kernel without Landlock (the probe fails) the child
// restores all the same, and its result says that it ran unconfined and why.
func TestChildWithoutLandlockSaysSo(t *testing.T) {
	f := newChain(t, "")
	r, _ := drill(t, store(t, f.objects), Options{Restore: child("run-without-landlock").Restore})
	if r.Err != nil || r.Revision != f.lastRev {
		t.Fatalf("result %+v, want revision %d", r, f.lastRev)
	}
	if !strings.Contains(r.Unconfined, "the kernel offers no Landlock") || !strings.Contains(r.Unconfined, syscall.ENOSYS.Error()) {
		t.Errorf("Unconfined %q; want the missing Landlock and why", r.Unconfined)
	}
}

// A job naming another directory than the child's own is refused: no restore, no finding.
func TestChildRefusesAnotherDirectory(t *testing.T) {
	ch, dir := fetched(t)
	job, err := json.Marshal(childJob{Dir: t.TempDir(), Etcd: ch.Etcd, Full: *ch.Full})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := RunChild(context.Background(), dir, "", bytes.NewReader(job), bytes.NewReader(nil), &out); err != nil {
		t.Fatal(err)
	}
	var res childResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Reason != "" || !strings.Contains(res.Error, "confined to") {
		t.Errorf("result %+v; want a refusal, no finding", res)
	}
	if _, err := os.Stat(filepath.Join(dir, fullFile)); err != nil {
		t.Errorf("the refused job touched the directory: %v", err)
	}
}

// The embedded etcd failing to listen (here: no name resolution, as a confinement without
// /etc/hosts gave) proves nothing about the backup; etcd refusing the data directory does.
func TestStartFailureOfTheNetworkIsNoFinding(t *testing.T) {
	_, listenErr := net.Listen("tcp", "localhost:-1")
	cases := []struct {
		err    error
		reason Reason
	}{
		{fmt.Errorf("wrapped: %w", listenErr), ""},
		{&os.PathError{Op: "open", Path: "data/member/snap/db", Err: syscall.EINVAL}, ReasonRestoreFailed},
	}
	for _, c := range cases {
		if got := ReasonOf(startFailure("key", c.err)); got != c.reason {
			t.Errorf("startFailure(%v): reason %q, want %q", c.err, got, c.reason)
		}
	}
}
