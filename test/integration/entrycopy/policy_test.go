// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	// The probe itself found the primary unavailable; the outage's lasting copy.failover.after is
	// played by moving that transition back (as time's passing would), not the probe's judgement:
	// each later look still probes the stopped MinIO, keeps the transition of a False it writes
	// again, and decides whether False has lasted long enough.
	since := backdateOutage(t, env.K8s, bb, copystore.MinFailoverAfter)
	var rec *connect.FailoverRecord
	env.WaitFor(t, bb, 2*time.Minute, "failover recorded, the copy served by policy", func(obj extensionsv1alpha1.Object) bool {
		var err error
		rec, err = connect.FailoverRecordOf(obj.(*extensionsv1alpha1.BackupBucket))
		return err == nil && rec != nil && rec.CopyBucket == copyBucket &&
			condition(obj, backupbucket.ConditionBackupsServedFrom, gardencorev1beta1.ConditionTrue, connect.ServeReasonCopyByPolicy, copyBucket, "is not converged")
	})
	if !rec.Since.Equal(&since) {
		t.Errorf("the failover record's outage began %s; want BucketAvailable's transition %s", rec.Since, since)
	}
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

// backdateOutage moves the transition of bb's BucketAvailable, False as the probe wrote it, back
// by d and returns the transition as the API server now holds it.
func backdateOutage(t *testing.T, c client.Client, bb *extensionsv1alpha1.BackupBucket, d time.Duration) metav1.Time {
	t.Helper()
	var since metav1.Time
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // the probe writes the condition too
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(bb), bb); err != nil {
			return err
		}
		patch := client.MergeFromWithOptions(bb.DeepCopy(), client.MergeFromWithOptimisticLock{})
		i := slices.IndexFunc(bb.Status.Conditions, func(c gardencorev1beta1.Condition) bool {
			return c.Type == backupbucket.ConditionBucketAvailable
		})
		if i < 0 || bb.Status.Conditions[i].Status != gardencorev1beta1.ConditionFalse {
			t.Fatalf("conditions %+v; want %s False", bb.Status.Conditions, backupbucket.ConditionBucketAvailable)
		}
		bb.Status.Conditions[i].LastTransitionTime = metav1.NewTime(bb.Status.Conditions[i].LastTransitionTime.Add(-d))
		if err := c.Status().Patch(context.Background(), bb, patch); err != nil {
			return err
		}
		since = v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionBucketAvailable).LastTransitionTime
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return since
}
