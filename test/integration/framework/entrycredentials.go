// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// EntryCredentials is a provider's run of per-entry credentials with the real
// etcd-backup-restore (EntryCredentialsFlow).
type EntryCredentials struct {
	// Operator is the BackupBucket's and the entry's secret data (the operator's credentials).
	Operator map[string][]byte
	// BucketConfig is the BackupBucket's providerConfig; EntryConfig the entry's, with
	// entryCredentials (gardenlet's copy of its bucket's, merged with the seed configuration).
	BucketConfig, EntryConfig string
	// Issuer is the issuer's name the etcd-backup secret must record.
	Issuer string
	// CredentialID is the ID of the credential secret data hold (the issuer's CredentialID).
	CredentialID func(data map[string][]byte) string
	// Consumer runs etcd-backup-restore as etcd-druid does for the provider (Binary is set by
	// the flow).
	Consumer stack.Consumer
	// Refused is what etcd-backup-restore logs when the store refuses it a request.
	Refused string
}

// CreateEntryWithConfig is CreateEntry with the entry's providerConfig (gardenlet's copy of its
// bucket's).
func (e *Env) CreateEntryWithConfig(t *testing.T, name, bucket string, data map[string][]byte, providerConfig string) *extensionsv1alpha1.BackupEntry {
	t.Helper()
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile}},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: e.Type, ProviderConfig: &runtime.RawExtension{Raw: []byte(providerConfig)}},
			Region:      e.Region,
			BucketName:  bucket,
			SecretRef:   e.CreateSecret(t, "garden", "entry-"+name, data),
		},
	}
	e.EnsureCluster(t, name, false)
	if err := e.K8s.Create(Ctx(t), be); err != nil {
		t.Fatal(err)
	}
	return be
}

// EntryCredentialsFlow runs: an entry with entryCredentials gets a credential of its own in
// etcd-backup; the real etcd-backup-restore (pinned and previous) snapshots, collects its garbage
// and restores with it; it cannot restore another entry's snapshots; the entry's deletion
// revokes it.
func (e *Env) EntryCredentialsFlow(t *testing.T, c EntryCredentials) {
	pinned, err := stack.Tool("etcdbr", "ETCDBR")
	if err != nil {
		t.Fatal(err)
	}
	previous, err := stack.PreviousEtcdbrctl()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("pinned etcd-backup-restore", func(t *testing.T) { e.entryCredentials(t, c, pinned) })
	t.Run("previous etcd-backup-restore", func(t *testing.T) { e.entryCredentials(t, c, previous) })
}

func (e *Env) entryCredentials(t *testing.T, c EntryCredentials, etcdbrctl string) {
	began := time.Now()
	step := func(what string) { t.Logf("%5.1fs %s", time.Since(began).Seconds(), what) }
	bb := e.CreateBucket(t, UniqueName("entrycred-"), c.Operator, c.BucketConfig)
	e.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", Succeeded)
	shoot := UniqueName("shoot--e--")
	entry := shoot + "--1"
	e.EnsureNamespace(t, shoot)
	be := e.CreateEntryWithConfig(t, entry, bb.Name, c.Operator, c.EntryConfig)
	e.WaitFor(t, be, 2*time.Minute, "entry reconciled", Succeeded)
	_, etcdBackup := e.SecretKeys(t, shoot, "etcd-backup")
	id := c.CredentialID(etcdBackup.Data)
	if r, _, _ := entryrecord.Read(entry, etcdBackup.Annotations); id == "" || id == c.CredentialID(c.Operator) || r.Published == nil || r.Published.ID != id || r.Published.Issuer != c.Issuer {
		t.Fatalf("etcd-backup holds %q with annotations %v; want the entry's own credential, recorded", id, etcdBackup.Annotations)
	}
	current := &extensionsv1alpha1.BackupEntry{}
	if err := e.K8s.Get(Ctx(t), client.ObjectKeyFromObject(be), current); err != nil {
		t.Fatal(err)
	}
	if cond := v1beta1helper.GetCondition(current.Status.Conditions, backupentry.ConditionEntryCredentials); cond == nil || cond.Status != gardencorev1beta1.ConditionTrue || !strings.Contains(cond.Message, id) {
		t.Fatalf("condition %+v; want True naming %s", cond, id)
	}
	entryStore := e.StoreFor(t, etcdBackup.Data)
	if err := entryStore.Probe(Ctx(t), bb.Name); !conformance.Refused(err) {
		t.Fatalf("the entry's credential listing the whole bucket: %v; want refused", err)
	}
	step("entry reconciled: its own credential in etcd-backup, the bucket's listing refused to it")

	// Another entry's snapshots in the same bucket, written with the operator's credentials.
	other := UniqueName("shoot--o--") + "--1"
	operatorStore := e.StoreFor(t, c.Operator)
	if err := operatorStore.PutObject(Ctx(t), bb.Name, other+"/etcd-main/v2/Full-00000000-00000001-1", []byte("not ours")); err != nil {
		t.Fatal(err)
	}

	consumer := c.Consumer
	consumer.Binary = etcdbrctl
	mount := t.TempDir()
	stack.MountSecret(t, mount, etcdBackup.Data)
	db := stack.StartEtcd(t, filepath.Join(t.TempDir(), "etcd"))
	db.Put(t, "/registry/first", "1")
	snaps := func() (int, int) { return CountSnapshots(t, operatorStore, bb.Name, entry) }
	sidecar := consumer.Snapshotter(t, db, mount, bb.Name, entry)
	waitForSidecar(t, sidecar, "a full snapshot", func() bool { f, _ := snaps(); return f >= 1 })
	db.Put(t, "/registry/delta", "2")
	waitForSidecar(t, sidecar, "a delta snapshot", func() bool { _, d := snaps(); return d >= 1 })
	sidecar.Stop()
	step("full and delta snapshot taken with the entry's credential")

	// Garbage collection: a second full snapshot at the start of a sidecar that keeps one.
	firstFull := fullSnapshots(t, operatorStore, bb.Name, entry)
	db.Put(t, "/registry/second", "3")
	gc := stack.StartProcess(t, "etcdbrctl-gc.log", consumer.Environment(mount, bb.Name), etcdbrctl, append([]string{"snapshot", "--endpoints=" + db.URL,
		"--delta-snapshot-period=1s", "--schedule=0 0 1 1 *", "--garbage-collection-period=2s", "--garbage-collection-policy=LimitBased",
		"--max-backups=1", "--snapstore-temp-directory=" + t.TempDir()}, consumer.StoreFlags(entry)...)...)
	waitForSidecar(t, gc, "the older full snapshot collected", func() bool {
		now := fullSnapshots(t, operatorStore, bb.Name, entry)
		return len(now) >= 1 && !strings.Contains(strings.Join(now, ","), firstFull[0])
	})
	gc.Stop()
	db.Stop()
	if strings.Contains(gc.Tail(), c.Refused) {
		t.Fatalf("the sidecar was refused something it does:\n%s", gc.Tail())
	}
	step("garbage collection deleted the older full snapshot with the entry's credential")

	restored := stack.StartEtcd(t, consumer.Restore(t, mount, bb.Name, entry))
	for k, v := range map[string]string{"/registry/first": "1", "/registry/delta": "2", "/registry/second": "3"} {
		if got := restored.Get(t, k); got != v {
			t.Errorf("restored etcd: %s = %q; want %q", k, got, v)
		}
	}
	restored.Stop()
	if _, log, err := consumer.TryRestore(t, mount, bb.Name, other); err == nil || !strings.Contains(log, c.Refused) {
		t.Fatalf("restoring another entry's snapshots with this entry's credential: %v; want refused (%s):\n%s", err, c.Refused, log)
	}
	step("restored with the entry's credential; another entry's snapshots refused to it")

	e.DeleteAndWaitGone(t, be, 2*time.Minute)
	if err := e.StoreFor(t, etcdBackup.Data).PutObject(Ctx(t), bb.Name, entry+"/probe", []byte("x")); !conformance.Refused(err) {
		t.Fatalf("the deleted entry's credential still writes: %v", err)
	}
	if f, d := snaps(); f+d != 0 {
		t.Errorf("%d full and %d delta snapshots left after the entry's deletion", f, d)
	}
	step("entry deleted: its objects gone, its credential revoked")
	e.DeleteAndWaitGone(t, bb, 2*time.Minute) // with the other entry's object
}

func waitForSidecar(t *testing.T, p *stack.Process, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); !done(); time.Sleep(250 * time.Millisecond) {
		if p.Exited() {
			t.Fatalf("etcd-backup-restore exited before %s (%v):\n%s", what, p.Err(), p.Tail())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 90s:\n%s", what, p.Tail())
		}
	}
}

func fullSnapshots(t *testing.T, store conformance.Stores, bucket, entry string) []string {
	t.Helper()
	keys, err := conformance.ListKeys(Ctx(t), store, bucket, entry+"/etcd-main/")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		if strings.Contains(k, "/Full-") {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		t.Fatal(fmt.Errorf("no full snapshot under %s/etcd-main/", entry))
	}
	return out
}
