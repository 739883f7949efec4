// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycopy"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// TestMoveToTheCopy: copy.serve copy while the primary is healthy moves the entry's backups to
// the copy with no gap: a key written to etcd after the switch by the sidecar that still holds the
// old secret, backed up only into the primary (the copy is paused), is in the copy once the
// shoot's etcd-backup-restore runs with the switched secret (its first snapshot there covers what
// the copy lacked), and a restore from the copy holds every key.
// The old primary keeps its objects (retired, not deleted).
func TestMoveToTheCopy(t *testing.T) {
	ctx := context.Background()
	r := startServing(t, ctx, "mv-")
	env, bb, copyBucket := r.env, r.bb, r.copyBucket
	be := r.entryOn(t, "aws")
	shoot := strings.TrimSuffix(be.Name, "--1")

	c := awsstack.S3Consumer
	mount := t.TempDir()
	stack.MountSecret(t, mount, bucketOf(t, env, shoot, bb.Name).Data)
	db := stack.StartEtcd(t, filepath.Join(t.TempDir(), "etcd"))
	want := map[string]string{"/registry/copied": "1"}
	sidecar := c.Snapshotter(t, db, mount, bb.Name, be.Name)
	store := env.StoreFor(t, r.data)
	framework.WaitCovered(t, ctx, store, sidecar, bb.Name, be.Name+"/", db.PutRev(t, "/registry/copied", "1"))
	copied := time.Now()
	env.WaitFor(t, be, 2*time.Minute, "a copy pass after the first snapshots", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionTrue, entrycopy.ReasonCopied) &&
			conditionUpdatedAfter(obj, entrycopy.ConditionBackupsCopied, copied)
	})

	// The switch; until kubelet remounts the secret and the shoot's reconcile rolls etcd, the
	// sidecar still writes the primary, and the paused copy no longer copies what it writes.
	step := time.Now()
	setEntryConfig(t, env, be, r.withCopy("copy"))
	r.setBucketConfig(t, r.withCopy("copy"))
	env.WaitFor(t, be, time.Minute, "entry reconciled serving the copy", framework.SucceededAfter(step))
	etcdBackup := bucketOf(t, env, shoot, copyBucket)
	env.WaitFor(t, be, time.Minute, "the copy paused", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionUnknown, entrycopy.ReasonServingFromCopy)
	})
	env.WaitFor(t, bb, 2*time.Minute, "bucket serving the copy", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, backupbucket.ConditionBackupsServedFrom, gardencorev1beta1.ConditionTrue, connect.ServeReasonCopy, copyBucket)
	})
	copyStore := env.StoreFor(t, r.second.SecretData())
	gap := db.PutRev(t, "/registry/after-the-switch", "2")
	want["/registry/after-the-switch"] = "2"
	framework.WaitCovered(t, ctx, store, sidecar, bb.Name, be.Name+"/", gap)
	for _, o := range framework.ListAll(t, ctx, copyStore, copyBucket) {
		if end, _, ok := stack.SnapshotEndRevision(o.Key); ok && strings.HasPrefix(o.Key, be.Name+"/") && end >= gap {
			t.Fatalf("the copy holds %s, written to the primary after the copy paused", o.Key)
		}
	}

	// The shoot's reconcile rolls etcd with the copy's bucket: the same data, the new secret.
	sidecar.Stop()
	primaryKeys := framework.ListAll(t, ctx, store, bb.Name)
	stack.MountSecret(t, mount, etcdBackup.Data)
	sidecar = c.Snapshotter(t, db, mount, copyBucket, be.Name)
	framework.WaitCovered(t, ctx, copyStore, sidecar, copyBucket, be.Name+"/", db.PutRev(t, "/registry/moved", "3"))
	want["/registry/moved"] = "3"
	sidecar.Stop()
	db.Stop()

	restored := stack.StartEtcd(t, c.Restore(t, mount, copyBucket, be.Name))
	for k, v := range want {
		if got := restored.Get(t, k); got != v {
			t.Errorf("restored from the copy after the move: %s = %q; want %q", k, got, v)
		}
	}
	restored.Stop()
	// The old primary is retired: its objects stay, and nothing was written there since.
	if got := framework.ListAll(t, ctx, store, bb.Name); len(got) != len(primaryKeys) || len(got) == 0 {
		t.Errorf("the old primary holds %d object versions; want its %d, kept", len(got), len(primaryKeys))
	}
}

// conditionUpdatedAfter is true when obj's condition t was last updated after since.
func conditionUpdatedAfter(obj extensionsv1alpha1.Object, t gardencorev1beta1.ConditionType, since time.Time) bool {
	for _, c := range obj.GetExtensionStatus().GetConditions() {
		if c.Type == t {
			return c.LastUpdateTime.After(since)
		}
	}
	return false
}
