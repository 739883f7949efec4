// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// TestCopyBucketProbe: the copy's credentials secret arriving after the BackupBucket's reconcile
// turns CopyCredentialsMissing into a converged, available copy bucket without an operator step;
// a copy bucket that `copy:` no longer names is reported while it holds objects and forgotten
// once it is empty; the copy store's outage is CopyBucketAvailable's, never BucketAvailable's.
func TestCopyBucketProbe(t *testing.T) {
	ctx := context.Background()
	primary, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Stop()
	second, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	bin := framework.StartBinary(t, ctx, &awsprovider.Provider{}, region, t.TempDir(), "--bucket-probe-interval", "2s")
	env, ext := bin.Env, bin.Ext
	data := primary.SecretData()

	copyConfig := func(bucketName string) string {
		return minio + `,"copy":{"credentialsRef":"backup-copy","bucketName":"` + bucketName + `","providerConfig":` + minio + `}}}`
	}
	name := framework.UniqueName("probe-")
	firstCopy, secondCopy := name+"-copy", name+"-copy2"
	bb := env.CreateBucket(t, name, data, copyConfig(firstCopy))
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	env.WaitFor(t, bb, time.Minute, "CopyBucketReady False CopyCredentialsMissing, CopyBucketAvailable False SecretMissing, BucketAvailable True", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, backupbucket.ConditionCopyBucketReady, gardencorev1beta1.ConditionFalse, backupbucket.ReasonCopyCredentialsErr) &&
			condition(obj, backupbucket.ConditionCopyBucketAvailable, gardencorev1beta1.ConditionFalse, "SecretMissing", "garden/ref-backup-copy") &&
			condition(obj, backupbucket.ConditionBucketAvailable, gardencorev1beta1.ConditionTrue, "Available")
	})

	// The secret arrives (gardenlet copies it from the Seed's spec.resources): nobody triggers.
	env.CreateSecret(t, "garden", "ref-backup-copy", second.SecretData())
	env.WaitFor(t, bb, 2*time.Minute, "CopyBucketReady True and CopyBucketAvailable True without an operator step", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, backupbucket.ConditionCopyBucketReady, gardencorev1beta1.ConditionTrue, backupbucket.ReasonCopyBucketReady, firstCopy) &&
			condition(obj, backupbucket.ConditionCopyBucketAvailable, gardencorev1beta1.ConditionTrue, "Available", firstCopy)
	})
	m := framework.ScrapeMetrics(t, ext.MetricsURL)
	if got := m.Get("gardener_backup_copy_bucket_available", map[string]string{"bucket": name, "copy_bucket": firstCopy}); len(got) != 1 || got[0].Value != 1 {
		t.Errorf("copy_bucket_available = %v; want one series, 1", got)
	}

	// `copy:` names another bucket while the first still holds a snapshot: it is reported, the
	// operator's to delete.
	copyStore := env.StoreFor(t, second.SecretData())
	key := fmt.Sprintf("shoot--a--b--1/etcd-main/v2/Full-00000000-00000001-%d", time.Now().Unix())
	if err := copyStore.PutObject(framework.Ctx(t), firstCopy, key, []byte("snapshot")); err != nil {
		t.Fatal(err)
	}
	setConfig(t, env, bb, copyConfig(secondCopy))
	env.Trigger(t, bb)
	env.WaitFor(t, bb, 2*time.Minute, "FormerCopyBucketsEmpty False naming the former copy bucket and its snapshot", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, backupbucket.ConditionFormerCopyBucketsEmpty, gardencorev1beta1.ConditionFalse, backupbucket.ReasonFormerCopyHoldsObjects, firstCopy, key, "the operator's to delete") &&
			condition(obj, backupbucket.ConditionCopyBucketReady, gardencorev1beta1.ConditionTrue, backupbucket.ReasonCopyBucketReady, secondCopy)
	})
	if !env.EventuallyHasEvent(t, name, backupbucket.ReasonFormerCopyBucket, firstCopy, time.Minute) {
		t.Errorf("no %s event naming %s", backupbucket.ReasonFormerCopyBucket, firstCopy)
	}
	ps, err := backupbucket.ReadProviderStatus(bb)
	if err != nil || ps.Copy == nil || ps.Copy.Bucket != secondCopy || len(ps.FormerCopies) != 1 || ps.FormerCopies[0].Bucket != firstCopy {
		t.Errorf("providerStatus %+v (%v); want the copy %s and the former %s", ps, err, secondCopy, firstCopy)
	}

	// The operator empties it: the next reconcile ends the record.
	if res, err := objectstore.DeletePrefix(framework.Ctx(t), copyStore, firstCopy, objectstore.WholeBucket(), objectstore.DeleteOptions{}); err != nil || !res.Done {
		t.Fatalf("emptying %s: %+v, %v", firstCopy, res, err)
	}
	env.Trigger(t, bb)
	env.WaitFor(t, bb, 2*time.Minute, "FormerCopyBucketsEmpty gone", func(obj extensionsv1alpha1.Object) bool {
		ps, err := backupbucket.ReadProviderStatus(obj.(*extensionsv1alpha1.BackupBucket))
		return err == nil && len(ps.FormerCopies) == 0 && v1beta1helper.GetCondition(obj.GetExtensionStatus().GetConditions(), backupbucket.ConditionFormerCopyBucketsEmpty) == nil
	})
	if !env.EventuallyHasEvent(t, name, backupbucket.ReasonFormerCopyBucketForgotten, firstCopy, time.Minute) {
		t.Errorf("no %s event naming %s", backupbucket.ReasonFormerCopyBucketForgotten, firstCopy)
	}

	// The copy store stops: the copy's condition and series say so; the primary's stay.
	second.Stop()
	env.WaitFor(t, bb, 2*time.Minute, "CopyBucketAvailable False, BucketAvailable True", func(obj extensionsv1alpha1.Object) bool {
		c := v1beta1helper.GetCondition(obj.GetExtensionStatus().GetConditions(), backupbucket.ConditionCopyBucketAvailable)
		return c != nil && c.Status == gardencorev1beta1.ConditionFalse &&
			condition(obj, backupbucket.ConditionBucketAvailable, gardencorev1beta1.ConditionTrue, "Available")
	})
	m = framework.ScrapeMetrics(t, ext.MetricsURL)
	if got := m.Get("gardener_backup_copy_bucket_available", map[string]string{"bucket": name, "copy_bucket": secondCopy}); len(got) != 1 || got[0].Value != 0 {
		t.Errorf("copy_bucket_available = %v; want one series, 0", got)
	}
	if got := m.Get("gardener_backup_bucket_available", map[string]string{"bucket": name, "credentials": "operator"}); len(got) != 1 || got[0].Value != 1 {
		t.Errorf("bucket_available = %v; want 1: the copy's outage is not the primary's", got)
	}
}

// setConfig replaces the bucket's providerConfig.
func setConfig(t *testing.T, env *framework.Env, bb *extensionsv1alpha1.BackupBucket, config string) {
	t.Helper()
	if err := env.K8s.Get(framework.Ctx(t), client.ObjectKeyFromObject(bb), bb); err != nil {
		t.Fatal(err)
	}
	bb.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
	if err := env.K8s.Update(framework.Ctx(t), bb); err != nil {
		t.Fatal(err)
	}
}
