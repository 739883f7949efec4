package consumer_test

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

	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// mountSecret writes data into dir as kubelet projects a secret volume (its AtomicWriter): the
// files live in a timestamped directory, "..data" links to it, and each key is a link
// "<key> -> ..data/<key>". Called again, it swaps the whole set at once, as kubelet does when the
// secret changes, so that a running sidecar sees new files with new modification times.
func mountSecret(t *testing.T, dir string, data map[string][]byte) {
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

// process is a started binary whose output goes to a log file kept for failure messages.
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func start(t *testing.T, logName string, env []string, bin string, args ...string) *process {
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
	p := &process{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(p.stop)
	return p
}

func (p *process) stop() {
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

// tail is the end of the process's log, for failure messages.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// etcd is a real etcd (the one envtest runs) on loopback ports, reached through its JSON gateway.
type etcd struct {
	*process
	url string
}

var etcdBinary = sync.OnceValues(func() (string, error) {
	dir, err := stack.Tool("envtest", "KUBEBUILDER_ASSETS")
	return filepath.Join(dir, "etcd"), err
})

// startEtcd starts etcd on dataDir (a new member, or a data directory etcd-backup-restore
// restored: both name the member "default" with the peer URL restore gives it).
func startEtcd(t *testing.T, dataDir string) *etcd {
	t.Helper()
	bin, err := etcdBinary()
	if err != nil {
		t.Fatal(err)
	}
	ports, err := stack.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	client, peer := ports[0], ports[1]
	e := &etcd{url: fmt.Sprintf("http://127.0.0.1:%d", client)}
	e.process = start(t, "etcd.log", os.Environ(), bin, "--name", "default", "--data-dir", dataDir,
		"--listen-client-urls", e.url, "--advertise-client-urls", e.url,
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer),
		"--initial-advertise-peer-urls", "http://localhost:2380", "--initial-cluster", "default=http://localhost:2380")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(e.url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return e
			}
		}
		if e.exited() || time.Now().After(deadline) {
			t.Fatalf("etcd on %s did not become healthy:\n%s", dataDir, e.tail())
		}
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func (e *etcd) call(t *testing.T, path string, req, resp any) {
	t.Helper()
	body, _ := json.Marshal(req)
	r, err := http.Post(e.url+path, "application/json", bytes.NewReader(body))
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

func (e *etcd) put(t *testing.T, key, value string) {
	t.Helper()
	var out map[string]any
	e.call(t, "/v3/kv/put", map[string]string{"key": b64(key), "value": b64(value)}, &out)
}

// get returns the value of key, "" if it is absent.
func (e *etcd) get(t *testing.T, key string) string {
	t.Helper()
	var out struct {
		KVs []struct{ Value string } `json:"kvs"`
	}
	e.call(t, "/v3/kv/range", map[string]string{"key": b64(key)}, &out)
	if len(out.KVs) == 0 {
		return ""
	}
	v, err := base64.StdEncoding.DecodeString(out.KVs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

var etcdbrctl = sync.OnceValues(func() (string, error) { return stack.Tool("etcdbr", "ETCDBR") })

// consumer is how etcd-druid runs etcd-backup-restore for one provider: the storage provider
// flag, the variable pointing at the mounted secret (GCS: at serviceaccount.json in it), and
// what the stand-in needs beyond what the secret says (flags, or variables the process needs to
// trust a stand-in's certificate).
type consumer struct {
	storageProvider string
	credentialsEnv  string
	file            string // "" for the directory itself
	flags           []string
	env             []string
}

// environment is the sidecar's whole environment: what etcd-druid sets and nothing of the test
// process (whose AWS_CA_BUNDLE, for one, a pod does not have).
func (c consumer) environment(secretDir, bucket string) []string {
	cred := secretDir
	if c.file != "" {
		cred = filepath.Join(secretDir, c.file)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "STORAGE_CONTAINER=" + bucket, c.credentialsEnv + "=" + cred}
	return append(env, c.env...)
}

func (c consumer) storeFlags(entry string) []string {
	return append([]string{"--storage-provider=" + c.storageProvider, "--store-prefix=" + entry + "/etcd-main"}, c.flags...)
}

// snapshotter starts `etcdbrctl snapshot` against etcd: a full snapshot at once, then a delta
// snapshot every second that has events (no scheduled full snapshot or garbage collection
// during a test: the schedule is yearly).
func (c consumer) snapshotter(t *testing.T, e *etcd, secretDir, bucket, entry string) *process {
	t.Helper()
	bin, err := etcdbrctl()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"snapshot", "--endpoints=" + e.url, "--delta-snapshot-period=1s", "--schedule=0 0 1 1 *",
		"--garbage-collection-period=1h", "--snapstore-temp-directory=" + t.TempDir()}, c.storeFlags(entry)...)
	return start(t, "etcdbrctl-snapshot.log", c.environment(secretDir, bucket), bin, args...)
}

// restore runs `etcdbrctl restore` into a new data directory and returns it.
func (c consumer) restore(t *testing.T, secretDir, bucket, entry string) string {
	t.Helper()
	bin, err := etcdbrctl()
	if err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(t.TempDir(), "restored.etcd")
	args := append([]string{"restore", "--data-dir=" + dataDir, "--restoration-temp-snapshots-dir=" + t.TempDir(),
		"--snapstore-temp-directory=" + t.TempDir()}, c.storeFlags(entry)...)
	p := start(t, "etcdbrctl-restore.log", c.environment(secretDir, bucket), bin, args...)
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("etcdbrctl restore did not finish:\n%s", p.tail())
	}
	// etcdbrctl restore exits 0 on some failures (options it cannot build): the restored data is
	// what counts, and the log says why when it is missing.
	if p.err != nil || !strings.Contains(p.tail(), "Successfully restored the etcd data directory") {
		t.Fatalf("etcdbrctl restore failed (%v):\n%s", p.err, p.tail())
	}
	return dataDir
}
