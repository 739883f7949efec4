// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package restoredrill_test runs the real aws binary as processes (as the chart runs them: the
// controllers, and the restore drill under its own ServiceAccount and RBAC) against a real
// kube-apiserver (envtest) and MinIO, with snapshots the real etcd-backup-restore took of a
// real etcd under a BackupEntry's prefix: the binary's restore drill (its own restore-drill child
// process) turns BackupsRestorable True at the revision etcd held; a damaged delta turns it False
// with HashMismatch; nothing is written to the bucket; the scratch directory is left empty.
package restoredrill_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const (
	region      = "eu-central-1"
	minioConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`
)

func TestBinaryDrillsRealSnapshots(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	scratch := t.TempDir()
	s := startDrillStack(t, ctx, dir, "--controllers=core", "--entry-inventory-interval", "0s")
	bin, env, data := s.bin, s.env, s.data
	ext := startDrillAsTheChart(t, ctx, bin, "--restore-drill-interval", "3s", "--restore-drill-scratch-dir", scratch, "--restore-drill-read-rate", "0")

	bb := s.bucket(t, "drill-")
	entry := framework.UniqueName("shoot--drill--") + "--1"
	be := s.entry(t, entry, bb.Name)

	// The real etcd-backup-restore backs up a real etcd into the entry's prefix: a full
	// snapshot, then deltas of three rounds of writes.
	store := env.StoreFor(t, data)
	secret := s.backupSecret(bb.Name)
	keys, rev := backUp(t, ctx, store, secret, bb.Name, entry)
	before := framework.ListAll(t, ctx, store, bb.Name)

	// Drills ran while the snapshots were taken; the one after the last covers them all.
	env.WaitFor(t, be, 2*time.Minute, "BackupsRestorable True at the last revision", func(obj extensionsv1alpha1.Object) bool {
		ps, err := entryinfo.ReadProviderStatus(obj.(*extensionsv1alpha1.BackupEntry))
		return restorable(gardencorev1beta1.ConditionTrue, restoredrill.ReasonRestored)(obj) && err == nil && ps.Drill != nil &&
			len(ps.Drill.Etcds) == 1 && ps.Drill.Etcds[0].Revision == rev
	})
	ps, err := entryinfo.ReadProviderStatus(be)
	if err != nil || ps.Drill == nil || len(ps.Drill.Etcds) != 1 {
		t.Fatalf("providerStatus.drill %+v (%v)", ps.Drill, err)
	}
	e := ps.Drill.Etcds[0]
	if e.Name != "etcd-main" || e.Revision != rev || e.Keys != int64(keys) || e.Deltas < 3 || e.BytesRead != e.Size || e.Duration.Duration <= 0 {
		t.Errorf("drill of etcd-main %+v; want revision %d, %d keys, 3 or more deltas, every listed byte read", e, rev, keys)
	}
	cond := v1beta1helper.GetCondition(be.Status.Conditions, restoredrill.ConditionBackupsRestorable)
	if !strings.Contains(cond.Message, fmt.Sprintf("restored to revision %d", rev)) || !strings.Contains(cond.Message, e.FullSnapshot) {
		t.Errorf("message %q does not say the revision %d and the full snapshot %s", cond.Message, rev, e.FullSnapshot)
	}
	t.Logf("drilled: %s", cond.Message)
	if !env.EventuallyHasEvent(t, entry, restoredrill.EventRestorable, "restored to revision", 30*time.Second) {
		t.Error("no BackupsRestorable event")
	}
	if after := framework.ListAll(t, ctx, store, bb.Name); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the drill changed the bucket:\nbefore %v\nafter  %v", before, after)
	}

	// A byte flipped in a delta (as a storage fault would): the next drill says so.
	var delta string
	for _, o := range before {
		if s, ok := drill.ParseKey(entry+"/", o.Key); ok && s.Kind == drill.KindDelta {
			delta = o.Key
		}
	}
	content, err := objectstore.ReadObject(framework.Ctx(t), store, bb.Name, delta)
	if err != nil {
		t.Fatal(err)
	}
	content[len(content)/2] ^= 0x01
	if err := store.PutObject(framework.Ctx(t), bb.Name, delta, content); err != nil {
		t.Fatal(err)
	}
	before = framework.ListAll(t, ctx, store, bb.Name)
	env.WaitFor(t, be, time.Minute, "BackupsRestorable False", restorable(gardencorev1beta1.ConditionFalse, string(drill.ReasonHashMismatch)))
	cond = v1beta1helper.GetCondition(be.Status.Conditions, restoredrill.ConditionBackupsRestorable)
	if !strings.Contains(cond.Message, delta) {
		t.Errorf("message %q does not name the damaged delta %s", cond.Message, delta)
	}
	if !env.EventuallyHasEvent(t, entry, restoredrill.EventNotRestorable, "HashMismatch", 30*time.Second) {
		t.Error("no BackupsNotRestorable event")
	}
	if got := framework.ScrapeMetrics(t, ext.MetricsURL).Get("gardener_backup_entry_restorable", map[string]string{"entry": entry, "etcd": "etcd-main"}); len(got) != 1 || got[0].Value != 0 {
		t.Errorf("gardener_backup_entry_restorable of %s/etcd-main: %v; want one series at 0", entry, got)
	}
	if after := framework.ListAll(t, ctx, store, bb.Name); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the drill changed the bucket:\nbefore %v\nafter  %v", before, after)
	}
	ext.Stop() // no drill running while the scratch directory is looked at
	bin.Ext.Stop()
	if left, err := os.ReadDir(scratch); err != nil || len(left) != 0 {
		t.Errorf("scratch directory not cleaned: %v %v", left, err)
	}

	// The cheap check: a middle delta gone (a lifecycle rule, a hand) is found by the next
	// inventory's listing, by names, and reported at once, long before the next drill and
	// without reading an object.
	var deltas []string
	for _, o := range before {
		if s, ok := drill.ParseKey(entry+"/", o.Key); ok && s.Kind == drill.KindDelta {
			deltas = append(deltas, o.Key)
		}
	}
	if _, err := store.DeleteObjects(framework.Ctx(t), bb.Name, []objectstore.ObjectVersion{{Key: deltas[1]}}); err != nil {
		t.Fatal(err)
	}
	// One process of every controller now (the drill's far off), its inventory frequent.
	ext2, err := stack.StartExtension(ctx, bin.TestEnv, bin.Path, t.TempDir(), "--entry-inventory-interval", "2s",
		"--restore-drill-interval", "1h", "--restore-drill-scratch-dir", scratch)
	if err != nil {
		t.Fatal(err)
	}
	defer ext2.Stop()
	env.WaitFor(t, be, time.Minute, "BackupsRestorable False by names", restorable(gardencorev1beta1.ConditionFalse, string(drill.ReasonChainBroken)))
	cond = v1beta1helper.GetCondition(be.Status.Conditions, restoredrill.ConditionBackupsRestorable)
	if !strings.Contains(cond.Message, "found by names") || !strings.Contains(cond.Message, "gap") {
		t.Errorf("message %q: want the gap found by names", cond.Message)
	}
	body, err := stack.Get(framework.Ctx(t), ext2.MetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(body, `operation="get_object"`) || strings.Contains(body, `operation="restore_drill"`) {
		t.Errorf("the report by names read objects or listed for a drill:\n%s", grep(body, "gardener_backup_cloud_requests_total"))
	}
}

func grep(body, prefix string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func restorable(status gardencorev1beta1.ConditionStatus, reason string) func(extensionsv1alpha1.Object) bool {
	return func(obj extensionsv1alpha1.Object) bool {
		c := v1beta1helper.GetCondition(obj.(*extensionsv1alpha1.BackupEntry).Status.Conditions, restoredrill.ConditionBackupsRestorable)
		return c != nil && c.Status == status && c.Reason == reason
	}
}

// backUp writes keys into a real etcd while the real etcd-backup-restore snapshots it into the
// entry's prefix (uncompressed: a delta's byte flipped is then found by its SHA-256), and returns
// how many keys etcd holds and its revision when every write is in a snapshot.
func backUp(t *testing.T, ctx context.Context, store objectstore.DataPlane, secret map[string][]byte, bucket, entry string) (int, int64) {
	t.Helper()
	db := stack.StartEtcd(t, filepath.Join(t.TempDir(), "etcd"))
	defer db.Stop()
	keys := map[string]bool{}
	put := func(key, value string) int64 {
		keys[key] = true
		return db.PutRev(t, key, value)
	}
	for i := range 20 {
		put(fmt.Sprintf("/registry/pods/ns/p%02d", i), strings.Repeat("x", 100*i))
	}
	mount := t.TempDir()
	stack.MountSecret(t, mount, secret)
	consumer := awsstack.S3Consumer
	consumer.Flags = append(consumer.Flags, "--compress-snapshots=false")
	sidecar := consumer.Snapshotter(t, db, mount, bucket, entry)
	defer sidecar.Stop()
	var rev int64
	for round := range 4 {
		if round > 0 {
			for i := range 3 {
				put(fmt.Sprintf("/registry/pods/ns/p%02d", round*3+i), fmt.Sprintf("changed in round %d", round))
				put(fmt.Sprintf("/registry/leases/r%d-%d", round, i), "new")
			}
		}
		rev = put(fmt.Sprintf("/registry/rounds/%d", round), "done")
		framework.WaitCovered(t, ctx, store, sidecar, bucket, entry+"/etcd-main/", rev)
	}
	sidecar.Stop()
	return len(keys), rev
}
