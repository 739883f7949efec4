// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package incumbent_test switches a seed's backups from a provider extension's own BackupBucket
// and BackupEntry controllers (the incumbent: its real code, built from test/incumbent/<provider>)
// to this extension's binary and back, on one envtest API server and the provider's stand-ins,
// with the real etcd-backup-restore writing snapshots throughout. One flow, one table of
// providers. See docs/migrating.md and docs/dev/testing.md.
package incumbent_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

func init() { logf.SetLogger(logr.Discard()) }

// incumbents are the provider extensions whose backup controllers are switched from and back to,
// each at the version its module (test/incumbent/<provider>) requires.
var incumbents = []struct {
	provider string
	start    func(t *testing.T, dir string) world
}{
	{"aws", startAWS},
	{"azure", startAzure},
	{"gcp", startGCP},
	{"openstack", startOpenStack},
}

// world is one provider's stand-ins for one run of the flow, and the checks of the flow that are
// the provider's own. Every check fails the test with what it found.
type world interface {
	// attach is the framework on the seed with this extension's provider.
	attach(k8s client.Client) *framework.Env
	// secretData is the operator's BackupBucket secret, which both extensions use.
	secretData() map[string][]byte
	// incumbentConfig is the seed's providerConfig in the incumbent's form (a store that can
	// hold objects is given a retention of a day, so that every deletion is deferred);
	// handBackConfig is the same with handBack: true.
	incumbentConfig() string
	handBackConfig() string
	// incumbentEnv is the incumbent process's environment besides PATH and HOME: how its code,
	// unchanged, reaches the stand-ins.
	incumbentEnv() []string
	// incumbentArgs are the incumbent's flags besides --kubeconfig (nil: none).
	incumbentArgs() []string
	// extensionFlags are this extension's binary's flags for the stand-ins (nil: none).
	extensionFlags() []string
	// consumer is how etcd-druid runs etcd-backup-restore for an entry.
	consumer(t *testing.T) stack.Consumer
	// defers is true where a deleted entry's objects stay under retention, marked for the
	// store's lifecycle; false where deletion removes them.
	defers() bool

	// incumbentMadeBucket: the incumbent's bucket creation reached the stand-ins as its code does it.
	incumbentMadeBucket(t *testing.T, bucket, incumbentLog string)
	// incumbentDeferred: the incumbent's deletion of entry left its marks (or removed the objects).
	incumbentDeferred(t *testing.T, bucket, entry string)
	// adopted: this extension's first reconcile adopted the bucket; deferredEntry's objects, which
	// the incumbent deferred, stay in scope of a rule that deletes them.
	adopted(t *testing.T, bucket, deferredEntry string)
	// weDeferred: this extension's deletion of entry left marks the incumbent's rule honours too.
	weDeferred(t *testing.T, bucket, entry string)
	// handedBack: the hand-back reconcile left the bucket in the incumbent's form.
	handedBack(t *testing.T, bucket string)
	// ended: after the incumbent deleted every entry, whatever is left is in scope of its own
	// lifecycle.
	ended(t *testing.T, bucket string)
}

// foreigner is a world that puts an operator's settings on the incumbent's bucket (addForeign)
// and reads back what of the bucket is neither this extension's nor the incumbent's rules
// (foreign, as sorted strings; on aws provider-aws's own s3:TlsVersion statement too): it must
// read the same after the takeover, after the hand-back and after the incumbent's reconcile.
type foreigner interface {
	addForeign(t *testing.T, bucket string)
	foreign(t *testing.T, bucket string) []string
}

func TestTakeOverFromTheIncumbentAndHandBack(t *testing.T) {
	for _, inc := range incumbents {
		t.Run(inc.provider, func(t *testing.T) {
			dir := t.TempDir()
			takeOverAndHandBack(t, inc.provider, inc.start(t, dir), dir)
		})
	}
}

// notServed are the incumbents whose module version the Go module proxy reachable here refuses
// (checked 2026-11-28 with an empty module cache), so that no machine of this project can build
// them: their cases run only where INCUMBENT_<PROVIDER> names a build made elsewhere.
var notServed = map[string]string{
	"azure":     "the module proxy answers 403 for github.com/gardener/gardener-extension-provider-azure@v1.62.1 (its .mod) and for the gardener v1.144.2 it requires",
	"openstack": "the module proxy answers 403 for github.com/gardener/gardener-extension-provider-openstack@v1.57.0 (its .zip)",
}

// incumbentBinary is the incumbent's controllers (test/incumbent/<provider>, a module of its
// own): $INCUMBENT_<PROVIDER> (make test builds them with hack/incumbent.sh), else
// hack/incumbent.sh builds (or finds cached) this one.
func incumbentBinary(t *testing.T, provider string) string {
	t.Helper()
	if p := os.Getenv("INCUMBENT_" + strings.ToUpper(provider)); p != "" {
		return p
	}
	if why, ok := notServed[provider]; ok {
		t.Skipf("the incumbent's real code cannot be built here: %s; set INCUMBENT_%s to a build of test/incumbent/%s to run this case", why, strings.ToUpper(provider), provider)
	}
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("building the incumbent's controllers (hack/incumbent.sh %s); a cold build takes minutes", provider)
	cmd := exec.Command("bash", filepath.Join(root, "hack", "incumbent.sh"), provider)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/incumbent.sh %s: %v", provider, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// seed is the flow's state: one envtest seed, one bucket.
// newSeed starts a seed (envtest, stopped at the test's end) in world w, its binaries in dir.
func newSeed(t *testing.T, w world, dir string) *seed {
	t.Helper()
	testEnv, cfg, err := stack.StartEnvtest()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testEnv.Stop() })
	scheme, err := app.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	s := &seed{t: t, w: w, env: testEnv, k8s: k8s, fw: w.attach(k8s), data: w.secretData(), dir: dir}
	return s
}

type seed struct {
	t      *testing.T
	w      world
	env    *envtest.Environment
	k8s    client.Client
	fw     *framework.Env
	data   map[string][]byte
	bucket string
	dir    string
}

// startIncumbent runs the incumbent's controllers with the world's environment only; nothing of
// the test process's environment is passed.
func (s *seed) startIncumbent(bin, provider string) *stack.Process {
	s.t.Helper()
	user, err := s.env.AddUser(envtest.User{Name: "provider-" + provider, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		s.t.Fatal(err)
	}
	path := filepath.Join(s.dir, "incumbent-kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		s.t.Fatal(err)
	}
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir}, s.w.incumbentEnv()...)
	return stack.StartProcess(s.t, "incumbent-"+provider+".log", env, bin, append([]string{"--kubeconfig", path}, s.w.incumbentArgs()...)...)
}

// entryData is the secret data gardenlet gives a new entry of bb: the bucket's generated secret
// where its status names one (provider-azure's generated-bucket-<name>), else the operator's.
func (s *seed) entryData(bb *extensionsv1alpha1.BackupBucket) map[string][]byte {
	s.t.Helper()
	if err := s.k8s.Get(context.Background(), client.ObjectKeyFromObject(bb), bb); err != nil {
		s.t.Fatal(err)
	}
	ref := bb.Status.GeneratedSecretRef
	if ref == nil {
		return s.data
	}
	var secret corev1.Secret
	if err := s.k8s.Get(context.Background(), client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &secret); err != nil {
		s.t.Fatal(err)
	}
	return secret.Data
}

// lister is a world that lists its store itself, where this extension's data plane with the
// operator's secret cannot list the incumbent's bucket before the takeover.
type lister interface {
	list(t *testing.T, bucket, prefix string) []objectstore.ObjectVersion
}

// list is every object version under prefix ("" for the whole bucket): through this extension's
// own data plane, or the world's lister.
func (s *seed) list(prefix string) []objectstore.ObjectVersion {
	s.t.Helper()
	if l, ok := s.w.(lister); ok {
		return l.list(s.t, s.bucket, prefix)
	}
	var all []objectstore.ObjectVersion
	err := s.fw.StoreFor(s.t, s.data).ListObjects(context.Background(), s.bucket, prefix, func(page []objectstore.ObjectVersion) error {
		all = append(all, page...)
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return all
}

// objects is list as sorted "key@version".
func (s *seed) objects(prefix string) []string {
	s.t.Helper()
	var ids []string
	for _, o := range s.list(prefix) {
		ids = append(ids, o.Key+"@"+o.Version)
	}
	slices.Sort(ids)
	return ids
}

// count is the number of current objects under entry/ whose key contains kind.
func (s *seed) count(entry, kind string) int {
	s.t.Helper()
	n := 0
	for _, o := range s.list(entry + "/") {
		if !o.Noncurrent && strings.Contains(o.Key, kind) {
			n++
		}
	}
	return n
}

// gone fails if a store that does not defer deletions (world.defers) kept anything under the
// deleted entry's prefix.
func (s *seed) gone(entry string) {
	s.t.Helper()
	if left := s.objects(entry + "/"); !s.w.defers() && len(left) > 0 {
		s.t.Errorf("entry %s is deleted, but %v are left under its prefix", entry, left)
	}
}

// sidecar is etcd-backup-restore for one entry with its etcd-backup secret as etcd-druid mounts
// it, and its etcd.
type sidecar struct {
	proc  *stack.Process
	db    *stack.Etcd
	mount string
}

func (s *seed) snapshot(entry string) *sidecar {
	s.t.Helper()
	shoot := entry[:strings.LastIndex(entry, "--")]
	_, secret := s.fw.SecretKeys(s.t, shoot, "etcd-backup")
	sc := &sidecar{mount: s.t.TempDir()}
	stack.MountSecret(s.t, sc.mount, secret.Data)
	sc.db = stack.StartEtcd(s.t, filepath.Join(s.t.TempDir(), "etcd"))
	sc.db.Put(s.t, "/registry/"+entry, "1")
	sc.proc = s.w.consumer(s.t).Snapshotter(s.t, sc.db, sc.mount, s.bucket, entry)
	s.waitSnapshots(sc, entry, "Full-", 1)
	return sc
}

func (s *seed) waitSnapshots(sc *sidecar, entry, kind string, atLeast int) {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for s.count(entry, kind) < atLeast {
		if sc.proc.Exited() || time.Now().After(deadline) {
			s.t.Fatalf("no %s snapshot %d of %s:\n%s", kind, atLeast, entry, sc.proc.Tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (sc *sidecar) stop() { sc.proc.Stop(); sc.db.Stop() }

func (s *seed) setConfig(bb *extensionsv1alpha1.BackupBucket, config string) {
	s.t.Helper()
	ctx := context.Background()
	if err := s.k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
		s.t.Fatal(err)
	}
	patch := client.MergeFrom(bb.DeepCopy())
	bb.Spec.ProviderConfig = nil
	if config != "" {
		bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
	}
	if err := s.k8s.Patch(ctx, bb, patch); err != nil {
		s.t.Fatal(err)
	}
}

// withHandBack is config (the incumbent's form, with its apiVersion and kind) with handBack: true.
func withHandBack(config string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(config), &m); err != nil {
		panic(err) // the table's constant
	}
	m["handBack"] = true
	raw, _ := json.Marshal(m)
	return string(raw)
}

func takeOverAndHandBack(t *testing.T, provider string, w world, dir string) {
	h := switchHalfWay(t, provider, w, dir)
	s, bb, beB, scB := h.seed, h.bb, h.beB, h.scB

	// 3. Hand back: handBack, then (with the incumbent's controllers on again) without it.
	s.setConfig(bb, w.handBackConfig())
	since := time.Now()
	s.fw.Trigger(t, bb)
	s.fw.WaitFor(t, bb, 2*time.Minute, "the hand-back reconcile", framework.SucceededAfter(since))
	w.handedBack(t, bb.Name)
	h.checkForeign("after the hand-back")
	h.ext.Stop()
	// The succeeded hand-back reconcile let go of the bucket's entries: this extension's own
	// finalizer, which the incumbent does not know (with it, the incumbent's deletion of an entry
	// this extension reconciled would succeed and the entry never go), is on none of them.
	h.noEntryHeld("after the hand-back reconcile")
	s.setConfig(bb, w.incumbentConfig())
	inc := s.startIncumbent(h.incumbent, provider)
	defer inc.Stop()
	// Its controllers reconcile on the operation annotation (gardener's DefaultControllerPredicates).
	since = time.Now()
	s.fw.Trigger(t, bb)
	s.fw.WaitFor(t, bb, 2*time.Minute, "the incumbent's reconcile after the hand-back", framework.SucceededAfter(since))
	h.checkForeign("after the incumbent's reconcile after the hand-back")
	h.step("handed back")
	beD := h.newEntry("shoot--p--d--1")
	scD := s.snapshot(beD.Name)
	scD.stop()
	scB.stop()
	s.fw.DeleteAndWaitGone(t, beD, 2*time.Minute)
	s.fw.DeleteAndWaitGone(t, beB, 2*time.Minute)
	left := s.objects("")
	if w.defers() {
		if !isSubset(h.before, left) {
			t.Errorf("objects gone, though under retention: %v", missing(h.before, left))
		}
	} else if len(left) != 0 {
		t.Errorf("the incumbent deleted every entry, but the container holds %v", left)
	}
	w.ended(t, bb.Name)
	h.step("the incumbent deleted b and d; what is left is in scope of its own lifecycle")
}

func isSubset(sub, of []string) bool { return len(missing(sub, of)) == 0 }

// missing is what of sub is not in of (both sorted).
func missing(sub, of []string) []string {
	var out []string
	for _, x := range sub {
		if _, ok := slices.BinarySearch(of, x); !ok {
			out = append(out, x)
		}
	}
	return out
}
