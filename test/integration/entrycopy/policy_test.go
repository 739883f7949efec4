// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycopy"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestAutomaticFailover: with copy.failover.after at its minimum, the primary's MinIO stopped:
// once BucketAvailable has been False that long (the copy available and converged), the
// BackupBucket records the failover, serves the copy by policy although its primary fails, and
// the entry's etcd-backup names the copy bucket without any operator step.
func TestAutomaticFailover(t *testing.T) {
	ctx := context.Background()
	r := startServing(t, ctx, "afo-", "--bucket-probe-interval", "15s")
	env, bb, copyBucket := r.env, r.bb, r.copyBucket
	policy := minio + `,"copy":{"credentialsRef":"backup-copy","failover":{"after":"` + copystore.MinFailoverAfter.String() + `"},"providerConfig":` + minio + `}}}`
	step := time.Now()
	r.setBucketConfig(t, policy)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled with copy.failover", framework.SucceededAfter(step))
	be := r.entryOn(t, "aws")
	shoot := strings.TrimSuffix(be.Name, "--1")
	bucketOf(t, env, shoot, bb.Name)
	rollEtcd(t, env, shoot, be, bb.Name) // gardenlet deployed the shoot's Etcd onto the primary

	r.primary.Stop()
	env.WaitFor(t, bb, time.Minute, "BucketAvailable False", func(obj extensionsv1alpha1.Object) bool {
		c := v1beta1helper.GetCondition(obj.GetExtensionStatus().GetConditions(), backupbucket.ConditionBucketAvailable)
		return c != nil && c.Status == gardencorev1beta1.ConditionFalse
	})
	env.WaitFor(t, bb, copystore.MinFailoverAfter+2*time.Minute, "failover recorded, the copy served by policy", func(obj extensionsv1alpha1.Object) bool {
		rec, err := connect.FailoverRecordOf(obj.(*extensionsv1alpha1.BackupBucket))
		return err == nil && rec != nil && rec.CopyBucket == copyBucket &&
			condition(obj, backupbucket.ConditionBackupsServedFrom, gardencorev1beta1.ConditionTrue, connect.ServeReasonCopyByPolicy, copyBucket, "is not converged")
	})
	if !env.EventuallyHasEvent(t, bb.Name, backupbucket.ReasonFailoverRecorded, "", time.Minute) {
		t.Errorf("no %s event", backupbucket.ReasonFailoverRecorded)
	}
	// The primary is gone and the failover recorded: etcd-backup names the copy with the copy's
	// credentials at once; the shoot writes the copy once gardenlet rolls its Etcd onto it.
	bucketOf(t, env, shoot, copyBucket)
	rollEtcd(t, env, shoot, be, copyBucket)
	env.WaitFor(t, be, 2*time.Minute, "the entry serves the copy: its copy pauses", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionUnknown, entrycopy.ReasonServingFromCopy, copyBucket, "automatic failover")
	})
	bucketOf(t, env, shoot, copyBucket)
}
