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
// the copy with no gap, by the two-phase switch: etcd-backup names the copy bucket but keeps the
// primary's credentials while the shoot's Etcd names the primary, so the real
// etcd-backup-restore, its secret remounted as kubelet does, keeps writing the primary and the
// entry copy goes on; once gardenlet rolls the Etcd onto the copy (played: the Etcd's container
// patched), the Etcd watch gives etcd-backup the copy's credentials, the sidecar writes the copy,
// the entry copy pauses, and a restore from the copy holds every key. The old primary keeps its
// objects (retired, not deleted) and gets nothing after the roll.
func TestMoveToTheCopy(t *testing.T) {
	ctx := context.Background()
	r := startServing(t, ctx, "mv-")
	env, bb, copyBucket := r.env, r.bb, r.copyBucket
	be := r.entryOn(t, "aws")
	shoot := strings.TrimSuffix(be.Name, "--1")
	rollEtcd(t, env, shoot, be, bb.Name)

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

	// The switch, phase 1: etcd-backup names the copy and keeps the primary's credentials; kubelet
	// remounts it, and the sidecar, whose Etcd still names the primary, keeps writing there.
	step := time.Now()
	setEntryConfig(t, env, be, r.withCopy("copy"))
	r.setBucketConfig(t, r.withCopy("copy"))
	env.WaitFor(t, be, time.Minute, "entry reconciled serving the copy", framework.SucceededAfter(step))
	holdsCredentials(t, env, shoot, copyBucket, r.primary.Endpoint, "phase 1")
	stack.MountSecret(t, mount, bucketOf(t, env, shoot, copyBucket).Data)
	env.WaitFor(t, bb, 2*time.Minute, "bucket serving the copy", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, backupbucket.ConditionBackupsServedFrom, gardencorev1beta1.ConditionTrue, connect.ServeReasonCopy, copyBucket)
	})
	copyStore := env.StoreFor(t, r.second.SecretData())
	during := db.PutRev(t, "/registry/during-phase-1", "2")
	want["/registry/during-phase-1"] = "2"
	framework.WaitCovered(t, ctx, store, sidecar, bb.Name, be.Name+"/", during)
	env.WaitFor(t, be, time.Minute, "the copy goes on while the switch is pending", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionTrue, entrycopy.ReasonCopied, "the switch is pending")
	})

	// The shoot's reconcile rolls etcd onto the copy bucket: the same data, the Etcd's new
	// container; the Etcd watch brings the copy's credentials (phase 2), kubelet remounts them.
	sidecar.Stop()
	primaryKeys := framework.ListAll(t, ctx, store, bb.Name)
	rollEtcd(t, env, shoot, be, copyBucket)
	waitCredentials(t, env, shoot, copyBucket, r.second.Endpoint, "phase 2, after the roll onto the copy")
	etcdBackup := bucketOf(t, env, shoot, copyBucket)
	stack.MountSecret(t, mount, etcdBackup.Data)
	sidecar = c.Snapshotter(t, db, mount, copyBucket, be.Name)
	framework.WaitCovered(t, ctx, copyStore, sidecar, copyBucket, be.Name+"/", db.PutRev(t, "/registry/moved", "3"))
	want["/registry/moved"] = "3"
	sidecar.Stop()
	db.Stop()
	env.WaitFor(t, be, time.Minute, "the copy paused", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionUnknown, entrycopy.ReasonServingFromCopy)
	})

	restored := stack.StartEtcd(t, c.Restore(t, mount, copyBucket, be.Name))
	for k, v := range want {
		if got := restored.Get(t, k); got != v {
			t.Errorf("restored from the copy after the move: %s = %q; want %q", k, got, v)
		}
	}
	restored.Stop()
	// The old primary is retired: its objects stay, and nothing was written there since the roll.
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
