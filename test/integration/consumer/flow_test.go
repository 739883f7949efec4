package consumer_test

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// mode is one credential mode of a provider: the operator's secret and the bucket's
// providerConfig, and what the shoot's etcd-backup must then hold.
type mode struct {
	name     string
	operator map[string][]byte
	config   string
	// generated: the bucket publishes generated credentials, which gardenlet hands to entries;
	// the flow then also rotates them under the running sidecar.
	generated bool
	// revokedRefused: the stand-in refuses a revoked generated credential at once, so that a
	// snapshot after the revocation proves the sidecar switched (Azurite cannot regenerate keys;
	// Swift's token cache and the GCS front keep already issued tokens valid for a while).
	revokedRefused bool
	// keys are exactly the keys etcd-backup must hold.
	keys []string
}

var seq atomic.Int64

// name returns a fresh DNS-label name (safe in parallel subtests).
func name(prefix string) string {
	return fmt.Sprintf("%s%d%d", prefix, time.Now().UnixNano()%100000, seq.Add(1))
}

// run is the consumer contract of one mode: the extension writes etcd-backup for an entry;
// etcd-backup-restore, given that secret as etcd-druid mounts it, takes a full and a delta
// snapshot of a real etcd into "<entry>/etcd-main"; with generated credentials the credential
// is rotated (with overlap) and remounted as kubelet does, and the running sidecar's next
// snapshot succeeds after the previous credential is revoked; a restore into a new data
// directory then holds every key. Deleting the entry removes the sidecar's snapshots.
func run(t *testing.T, env *framework.Env, c consumer, m mode) {
	bb := env.CreateBucket(t, name("c-"), m.operator, m.config)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	entryData := m.operator
	var generated *corev1.Secret
	if m.generated {
		var err error
		if generated, err = env.GeneratedSecret(t, bb.Name); err != nil {
			t.Fatalf("no generated secret: %v", err)
		}
		entryData = generated.Data
	}
	shoot := name("shoot--c--")
	entry := shoot + "--1"
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, entry, bb.Name, entryData)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	_, etcdBackup := env.SecretKeys(t, shoot, "etcd-backup")

	mount := t.TempDir()
	mountSecret(t, mount, etcdBackup.Data)
	db := startEtcd(t, filepath.Join(t.TempDir(), "etcd"))
	want := map[string]string{"/registry/before-full": "1"}
	db.put(t, "/registry/before-full", "1")
	sidecar := c.snapshotter(t, db, mount, bb.Name, entry)
	// The test lists snapshots with the credential the entry has (after a rotation the new one).
	store := env.StoreFor(t, entryData)
	snaps := func() (full, delta int) { return countSnapshots(t, store, bb.Name, entry) }
	waitSnapshots(t, sidecar, "a full snapshot", func() bool { f, _ := snaps(); return f >= 1 })
	db.put(t, "/registry/delta", "2")
	want["/registry/delta"] = "2"
	waitSnapshots(t, sidecar, "a delta snapshot", func() bool { _, d := snaps(); return d >= 1 })

	if m.generated {
		var rotated map[string][]byte
		etcdBackup, rotated = rotate(t, env, bb, be, generated, etcdBackup)
		store = env.StoreFor(t, rotated)
		mountSecret(t, mount, etcdBackup.Data)
		if m.revokedRefused {
			waitRevoked(t, env, bb.Name, generated.Data)
		}
		_, before := snaps()
		db.put(t, "/registry/after-rotation", "3")
		want["/registry/after-rotation"] = "3"
		waitSnapshots(t, sidecar, "a delta snapshot after the rotation", func() bool { _, d := snaps(); return d > before })
		if !strings.Contains(sidecar.tail(), "Updated the snapstore object with new credentials") {
			t.Fatalf("the sidecar did not rebuild its store from the rotated secret:\n%s", sidecar.tail())
		}
	}
	sidecar.stop()
	db.stop()
	// The consumer's use comes first (its log says why it fails); then the exact key set.
	assertKeys(t, etcdBackup, m.keys)

	restored := startEtcd(t, c.restore(t, mount, bb.Name, entry))
	for k, v := range want {
		if got := restored.get(t, k); got != v {
			t.Errorf("restored etcd: %s = %q; want %q", k, got, v)
		}
	}
	restored.stop()

	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	if f, d := snaps(); f+d != 0 {
		t.Errorf("%d full and %d delta snapshots left after the entry's deletion", f, d)
	}
	env.DeleteAndWaitGone(t, bb, 2*time.Minute)
}

// assertKeys fails unless etcd-backup holds exactly keys.
func assertKeys(t *testing.T, etcdBackup *corev1.Secret, keys []string) {
	t.Helper()
	got := slices.Sorted(maps.Keys(etcdBackup.Data))
	if want := slices.Sorted(slices.Values(keys)); !slices.Equal(got, want) {
		t.Errorf("etcd-backup holds keys %v; want exactly %v", got, want)
	}
}

// countSnapshots counts the sidecar's full and delta snapshots under "<entry>/etcd-main/".
func countSnapshots(t *testing.T, store objectstore.Store, bucket, entry string) (full, delta int) {
	t.Helper()
	keys, err := conformance.ListKeys(framework.Ctx(t), store, bucket, entry+"/etcd-main/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		switch base := k[strings.LastIndex(k, "/")+1:]; {
		case strings.HasPrefix(base, "Full-"):
			full++
		case strings.HasPrefix(base, "Incr-"):
			delta++
		}
	}
	return full, delta
}

// waitSnapshots polls until done holds; it fails at once when the sidecar exits.
func waitSnapshots(t *testing.T, sidecar *process, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !done(); time.Sleep(200 * time.Millisecond) {
		if sidecar.exited() {
			t.Fatalf("etcd-backup-restore exited before %s (%v):\n%s", what, sidecar.err, sidecar.tail())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute:\n%s", what, sidecar.tail())
		}
	}
}

// rotate requests a rotation of the bucket's generated credential, hands the new one to the
// entry as gardenlet does (the entry's secret is the generated secret's data) and returns the
// shoot's etcd-backup once it carries it, and the new generated
// secret's data.
func rotate(t *testing.T, env *framework.Env, bb *extensionsv1alpha1.BackupBucket, be *extensionsv1alpha1.BackupEntry, first, etcdBackup *corev1.Secret) (*corev1.Secret, map[string][]byte) {
	t.Helper()
	env.Trigger(t, bb, backupbucket.AnnotationRotateCredentials, "r1")
	var second *corev1.Secret
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		s, err := env.GeneratedSecret(t, bb.Name)
		if err == nil && s.Annotations[backupbucket.AnnotationCredential] != first.Annotations[backupbucket.AnnotationCredential] {
			second = s
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rotation published no new credential (%v)", err)
		}
	}
	entrySecret := &corev1.Secret{}
	if err := env.K8s.Get(framework.Ctx(t), client.ObjectKey{Namespace: be.Spec.SecretRef.Namespace, Name: be.Spec.SecretRef.Name}, entrySecret); err != nil {
		t.Fatal(err)
	}
	entrySecret.Data = maps.Clone(second.Data)
	if err := env.K8s.Update(framework.Ctx(t), entrySecret); err != nil {
		t.Fatal(err)
	}
	env.Trigger(t, be)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		_, s := env.SecretKeys(t, be.Name[:strings.LastIndex(be.Name, "--")], "etcd-backup")
		if !sameData(s.Data, etcdBackup.Data) {
			return s, second.Data
		}
		if time.Now().After(deadline) {
			t.Fatal("etcd-backup does not carry the rotated credential")
		}
	}
}

func sameData(a, b map[string][]byte) bool { return maps.EqualFunc(a, b, bytes.Equal) }

// waitRevoked waits until the store refuses the previous credential (its grace period over).
func waitRevoked(t *testing.T, env *framework.Env, bucket string, previous map[string][]byte) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		err := env.StoreFor(t, previous).PutObject(framework.Ctx(t), bucket, "probe/revoked", []byte("x"))
		if conformance.Refused(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the previous credential was not revoked after its grace period: %v", err)
		}
	}
}
