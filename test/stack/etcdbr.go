// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// The real etcd-backup-restore as etcd-druid runs it beside a real etcd, with its secret mounted as
// kubelet mounts it: the consumer of the etcd-backup secret, for tests that prove that secret.

package stack

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// MountSecret writes data into dir as kubelet projects a secret volume (its AtomicWriter): the
// files live in a timestamped directory, "..data" links to it, and each key is a link
// "<key> -> ..data/<key>". Called again, it swaps the whole set at once, as kubelet does when the
// secret changes, so that a running sidecar sees new files with new modification times.
func MountSecret(t testing.TB, dir string, data map[string][]byte) {
	t.Helper()
	ts := filepath.Join(dir, ".."+time.Now().Format("2006_01_02_15_04_05.000000000"))
	if err := os.MkdirAll(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(ts, k), v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries { // keys that are gone
		if _, ok := data[e.Name()]; !ok && !strings.HasPrefix(e.Name(), "..") {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	for k := range data {
		if _, err := os.Lstat(filepath.Join(dir, k)); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
			t.Fatal(err)
		}
	}
	if old != "" {
		_ = os.RemoveAll(filepath.Join(dir, old))
	}
}

// Process is a started binary whose output goes to a log file kept for failure messages.
type Process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// StartProcess starts bin with exactly env, its output into logName in a test directory; the
// process is stopped when the test ends.
func StartProcess(t testing.TB, logName string, env []string, bin string, args ...string) *Process {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), logName)
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Process{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(p.Stop)
	return p
}

// Stop interrupts the process and waits for it (killing it after 10s).
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// LogPath is the file the process writes its output to.
func (p *Process) LogPath() string { return p.log }

// Tail is the end of the process's log, for failure messages.
func (p *Process) Tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Err is how the process ended (nil while it runs).
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Exited reports whether the process ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Etcd is a real etcd (the one envtest runs) on loopback ports, reached through its JSON gateway.
type Etcd struct {
	*Process

	URL string
}

var etcdBinary = sync.OnceValues(func() (string, error) {
	dir, err := Tool("envtest", "KUBEBUILDER_ASSETS")
	return filepath.Join(dir, "etcd"), err
})

// StartEtcd starts etcd on dataDir (a new member, or a data directory etcd-backup-restore
// restored: both name the member "default" with the peer URL restore gives it).
func StartEtcd(t testing.TB, dataDir string) *Etcd {
	t.Helper()
	bin, err := etcdBinary()
	if err != nil {
		t.Fatal(err)
	}
	ports, err := FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	client, peer := ports[0], ports[1]
	e := &Etcd{URL: fmt.Sprintf("http://127.0.0.1:%d", client)}
	e.Process = StartProcess(t, "etcd.log", os.Environ(), bin, "--name", "default", "--data-dir", dataDir,
		"--listen-client-urls", e.URL, "--advertise-client-urls", e.URL,
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer),
		"--initial-advertise-peer-urls", "http://localhost:2380", "--initial-cluster", "default=http://localhost:2380")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(e.URL + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return e
			}
		}
		if e.Exited() || time.Now().After(deadline) {
			t.Fatalf("etcd on %s did not become healthy:\n%s", dataDir, e.Tail())
		}
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// Call posts req to etcd's JSON gateway at path (/v3/kv/...) and decodes its answer into resp.
func (e *Etcd) Call(t testing.TB, path string, req, resp any) {
	t.Helper()
	body, _ := json.Marshal(req)
	r, err := http.Post(e.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("etcd %s: %s", path, r.Status)
	}
	if err := json.NewDecoder(r.Body).Decode(resp); err != nil {
		t.Fatal(err)
	}
}

// Put writes key.
func (e *Etcd) Put(t testing.TB, key, value string) {
	t.Helper()
	var out map[string]any
	e.Call(t, "/v3/kv/put", map[string]string{"key": b64(key), "value": b64(value)}, &out)
}

// Get returns the value of key, "" if it is absent.
func (e *Etcd) Get(t testing.TB, key string) string {
	t.Helper()
	var out struct {
		KVs []struct{ Value string } `json:"kvs"`
	}
	e.Call(t, "/v3/kv/range", map[string]string{"key": b64(key)}, &out)
	if len(out.KVs) == 0 {
		return ""
	}
	v, err := base64.StdEncoding.DecodeString(out.KVs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

var etcdbrctl = sync.OnceValues(func() (string, error) { return Tool("etcdbr", "ETCDBR") })

// PreviousEtcdbrctl is the etcd-backup-restore before the pinned one (hack/tools.sh
// etcdbr-previous, ETCDBR_PREVIOUS), which shoots of landscapes that have not moved yet run.
var PreviousEtcdbrctl = sync.OnceValues(func() (string, error) { return Tool("etcdbr-previous", "ETCDBR_PREVIOUS") })

// Consumer is how etcd-druid runs etcd-backup-restore for one provider: the storage provider
// flag, the variable pointing at the mounted secret (GCS: at serviceaccount.json in it), and
// what the stand-in needs beyond what the secret says (flags, or variables the process needs to
// trust a stand-in's certificate).
type Consumer struct {
	StorageProvider string
	CredentialsEnv  string
	File            string // "" for the directory itself
	Flags           []string
	Env             []string
	// Binary is the etcdbrctl to run; "" is the pinned version's (hack/tools.sh etcdbr, ETCDBR).
	Binary string
	// HomeKey, if set, is the mounted secret's key whose value is the sidecar's HOME: etcd-druid
	// mounts "<hostPath>/<bucket>" at "$HOME/<bucket>" for the Local storage provider, which
	// stores under "$HOME/<STORAGE_CONTAINER>/<prefix>"; HOME = hostPath is that mount's view.
	HomeKey string
}

// Environment is the sidecar's whole environment: what etcd-druid sets and nothing of the test
// process (whose AWS_CA_BUNDLE, for one, a pod does not have).
func (c Consumer) Environment(secretDir, bucket string) []string {
	cred := secretDir
	if c.File != "" {
		cred = filepath.Join(secretDir, c.File)
	}
	home := os.TempDir()
	if c.HomeKey != "" {
		if v, err := os.ReadFile(filepath.Join(secretDir, c.HomeKey)); err == nil {
			home = string(v)
		}
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "STORAGE_CONTAINER=" + bucket}
	if c.CredentialsEnv != "" {
		env = append(env, c.CredentialsEnv+"="+cred)
	}
	return append(env, c.Env...)
}

// binary is the etcdbrctl c runs.
func (c Consumer) binary() (string, error) {
	if c.Binary != "" {
		return c.Binary, nil
	}
	return etcdbrctl()
}

// StoreFlags are the sidecar's store flags for an entry's "<entry>/etcd-main" prefix.
func (c Consumer) StoreFlags(entry string) []string {
	return append([]string{"--storage-provider=" + c.StorageProvider, "--store-prefix=" + entry + "/etcd-main"}, c.Flags...)
}

// Snapshotter starts `etcdbrctl snapshot` against etcd: a full snapshot at once, then a delta
// snapshot every second that has events (no scheduled full snapshot or garbage collection
// during a test: the schedule is yearly).
func (c Consumer) Snapshotter(t testing.TB, e *Etcd, secretDir, bucket, entry string) *Process {
	t.Helper()
	bin, err := c.binary()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"snapshot", "--endpoints=" + e.URL, "--delta-snapshot-period=1s", "--schedule=0 0 1 1 *",
		"--garbage-collection-period=1h", "--snapstore-temp-directory=" + t.TempDir()}, c.StoreFlags(entry)...)
	return StartProcess(t, "etcdbrctl-snapshot.log", c.Environment(secretDir, bucket), bin, args...)
}

// Restore runs `etcdbrctl restore` into a new data directory and returns it; a failed restore
// fails the test.
func (c Consumer) Restore(t testing.TB, secretDir, bucket, entry string) string {
	t.Helper()
	dataDir, log, err := c.TryRestore(t, secretDir, bucket, entry)
	if err != nil {
		t.Fatalf("%v:\n%s", err, log)
	}
	return dataDir
}

// TryRestore runs `etcdbrctl restore` into a new data directory and returns it, the tail of its
// log, and an error when it did not restore.
func (c Consumer) TryRestore(t testing.TB, secretDir, bucket, entry string) (string, string, error) {
	t.Helper()
	bin, err := c.binary()
	if err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(t.TempDir(), "restored.etcd")
	args := append([]string{"restore", "--data-dir=" + dataDir, "--restoration-temp-snapshots-dir=" + t.TempDir(),
		"--snapstore-temp-directory=" + t.TempDir()}, c.StoreFlags(entry)...)
	p := StartProcess(t, "etcdbrctl-restore.log", c.Environment(secretDir, bucket), bin, args...)
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("etcdbrctl restore did not finish:\n%s", p.Tail())
	}
	// etcdbrctl restore exits 0 on some failures (options it cannot build): the restored data is
	// what counts, and the log says why when it is missing.
	if p.err != nil || !strings.Contains(p.Tail(), "Successfully restored the etcd data directory") {
		return "", p.Tail(), fmt.Errorf("etcdbrctl restore failed (%v)", p.err)
	}
	return dataDir, p.Tail(), nil
}
