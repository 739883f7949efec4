// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

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

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	securityv1alpha1constants "github.com/gardener/gardener/pkg/apis/security/v1alpha1/constants"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
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
	// workloadIdentity: the operator's secret is a workload identity secret (labelled for
	// gardener's token requestor).
	workloadIdentity bool
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
// directory then holds every key. The entry's inventory (inventory.Take) names the snapshots the
// sidecar wrote last and counts what a plain listing lists. Deleting the entry removes the sidecar's snapshots.
func run(t *testing.T, env *framework.Env, c stack.Consumer, m mode) {
	began := time.Now()
	step := func(what string) { t.Logf("%5.1fs %s", time.Since(began).Seconds(), what) }
	bb := createBucket(t, env, m)
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
	step("bucket and entry reconciled")

	mount := t.TempDir()
	stack.MountSecret(t, mount, etcdBackup.Data)
	db := stack.StartEtcd(t, filepath.Join(t.TempDir(), "etcd"))
	want := map[string]string{"/registry/before-full": "1"}
	db.Put(t, "/registry/before-full", "1")
	sidecar := c.Snapshotter(t, db, mount, bb.Name, entry)
	// The test lists snapshots with the credential the entry has (after a rotation the new one).
	store := env.StoreFor(t, entryData)
	snaps := func() (full, delta int) { return framework.CountSnapshots(t, store, bb.Name, entry) }
	waitSnapshots(t, sidecar, "a full snapshot", func() bool { f, _ := snaps(); return f >= 1 })
	db.Put(t, "/registry/delta", "2")
	want["/registry/delta"] = "2"
	waitSnapshots(t, sidecar, "a delta snapshot", func() bool { _, d := snaps(); return d >= 1 })
	step("full and delta snapshot taken")

	if m.generated {
		var rotated map[string][]byte
		etcdBackup, rotated = rotate(t, env, bb, be, generated)
		store = env.StoreFor(t, rotated)
		stack.MountSecret(t, mount, etcdBackup.Data)
		step("rotated credential mounted")
		if m.revokedRefused {
			waitRevoked(t, env, bb.Name, generated.Data)
			step("previous credential revoked")
		}
		_, before := snaps()
		db.Put(t, "/registry/after-rotation", "3")
		want["/registry/after-rotation"] = "3"
		waitSnapshots(t, sidecar, "a delta snapshot after the rotation", func() bool { _, d := snaps(); return d > before })
		if !strings.Contains(sidecar.Tail(), "Updated the snapstore object with new credentials") {
			t.Fatalf("the sidecar did not rebuild its store from the rotated secret:\n%s", sidecar.Tail())
		}
		step("delta snapshot after the rotation taken")
	}
	sidecar.Stop()
	db.Stop()
	// Once the sidecar stopped, nothing changes under the inventory.
	checkInventory(t, store, bb.Name, entry, sidecar)
	step("inventory checked")
	// The consumer's use comes first (its log says why it fails); then the exact key set.
	assertKeys(t, etcdBackup, m.keys)

	restored := stack.StartEtcd(t, c.Restore(t, mount, bb.Name, entry))
	for k, v := range want {
		if got := restored.Get(t, k); got != v {
			t.Errorf("restored etcd: %s = %q; want %q", k, got, v)
		}
	}
	restored.Stop()
	step("restored")

	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	if f, d := snaps(); f+d != 0 {
		t.Errorf("%d full and %d delta snapshots left after the entry's deletion", f, d)
	}
	env.DeleteAndWaitGone(t, bb, 2*time.Minute)
	step("entry and bucket deleted")
}

// createBucket creates the bucket as gardenlet does, with the operator's secret
// garden/bucket-<name> (labelled as a workload identity secret for such a mode).
func createBucket(t *testing.T, env *framework.Env, m mode) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	if !m.workloadIdentity {
		return env.CreateBucket(t, name("c-"), m.operator, m.config)
	}
	n := name("c-")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "bucket-" + n,
		Labels: map[string]string{securityv1alpha1constants.LabelPurpose: securityv1alpha1constants.LabelPurposeWorkloadIdentityTokenRequestor}}, Data: m.operator}
	env.EnsureNamespace(t, "garden")
	if err := env.K8s.Create(framework.Ctx(t), secret); err != nil {
		t.Fatal(err)
	}
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: n, Annotations: map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile}},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: env.Type, ProviderConfig: &runtime.RawExtension{Raw: []byte(m.config)}},
			Region:      env.Region,
			SecretRef:   corev1.SecretReference{Namespace: "garden", Name: secret.Name},
		},
	}
	if err := env.K8s.Create(framework.Ctx(t), bb); err != nil {
		t.Fatal(err)
	}
	return bb
}

// assertKeys fails unless etcd-backup holds exactly keys.
func assertKeys(t *testing.T, etcdBackup *corev1.Secret, keys []string) {
	t.Helper()
	got := slices.Sorted(maps.Keys(etcdBackup.Data))
	if want := slices.Sorted(slices.Values(keys)); !slices.Equal(got, want) {
		t.Errorf("etcd-backup holds keys %v; want exactly %v", got, want)
	}
}

// waitSnapshots polls until done holds; it fails at once when the sidecar exits.
func waitSnapshots(t *testing.T, sidecar *stack.Process, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !done(); time.Sleep(200 * time.Millisecond) {
		if sidecar.Exited() {
			t.Fatalf("etcd-backup-restore exited before %s (%v):\n%s", what, sidecar.Err(), sidecar.Tail())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute:\n%s", what, sidecar.Tail())
		}
	}
}

// rotate requests a rotation of the bucket's generated credential, hands the new one to the
// entry as gardenlet does (the entry's secret is the generated secret's data) and returns the
// shoot's etcd-backup after the entry's next reconcile, which must carry the new credential, and
// the new generated secret's data.
func rotate(t *testing.T, env *framework.Env, bb *extensionsv1alpha1.BackupBucket, be *extensionsv1alpha1.BackupEntry, first *corev1.Secret) (*corev1.Secret, map[string][]byte) {
	t.Helper()
	env.Trigger(t, bb, backupbucket.AnnotationRotateCredentials, "r1")
	var second *corev1.Secret
	// Two minutes, as for the other reconciles here: issuing an OpenStack application credential
	// takes Keystone several seconds, many more on 2 busy cores.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
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
	env.WaitFor(t, be, time.Minute, "entry reconciled after the rotation", framework.SucceededAfter(time.Now()))
	_, etcdBackup := env.SecretKeys(t, be.Name[:strings.LastIndex(be.Name, "--")], "etcd-backup")
	for k, v := range etcdBackup.Data {
		if w, ok := second.Data[k]; ok && !bytes.Equal(v, w) {
			t.Fatalf("etcd-backup's %q is not the rotated credential's", k)
		}
	}
	return etcdBackup, second.Data
}

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
