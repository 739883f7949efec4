// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycopy"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// TestFailoverToTheCopy: the real etcd-backup-restore backs up a real etcd into the primary
// MinIO with the entry's etcd-backup; the entry copy copies it to a second MinIO with other
// credentials; the primary bucket is deleted. The documented step (copy.serve: copy) points
// etcd-backup at the copy bucket with the copy's credentials; etcd-backup-restore restores
// every key from it, and its next snapshot, with that secret, lands in the copy. The entry copy
// pauses, and on a seed whose provider's webhook would refuse the shoot's Etcd the step is
// refused.
func TestFailoverToTheCopy(t *testing.T) {
	ctx := context.Background()
	r := startServing(t, ctx, "fo-")
	env, primary, second, data, bb, copyBucket, withCopy := r.env, r.primary, r.second, r.data, r.bb, r.copyBucket, r.withCopy
	// Two shoots: one on an aws seed, one whose namespace says the seed's provider is gcp.
	entries := []*extensionsv1alpha1.BackupEntry{r.entryOn(t, "aws"), r.entryOn(t, "gcp")}
	be, onGCP := entries[0], entries[1]
	shoot := strings.TrimSuffix(be.Name, "--1")
	etcdBackup := bucketOf(t, env, shoot, bb.Name)
	rollEtcd(t, env, shoot, be, bb.Name)

	// The real etcd-backup-restore backs up into the primary with the entry's etcd-backup.
	c := awsstack.S3Consumer
	mount := t.TempDir()
	stack.MountSecret(t, mount, etcdBackup.Data)
	db := stack.StartEtcd(t, filepath.Join(t.TempDir(), "etcd"))
	want := map[string]string{"/registry/before-full": "1"}
	db.Put(t, "/registry/before-full", "1")
	sidecar := c.Snapshotter(t, db, mount, bb.Name, be.Name)
	store := env.StoreFor(t, data)
	framework.WaitCovered(t, ctx, store, sidecar, bb.Name, be.Name+"/", db.PutRev(t, "/registry/delta", "2"))
	want["/registry/delta"] = "2"
	sidecar.Stop()
	db.Stop()
	full, delta := framework.CountSnapshots(t, store, bb.Name, be.Name)
	env.WaitFor(t, be, 2*time.Minute, "BackupsCopied True with every snapshot", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionTrue, entrycopy.ReasonCopied, fmt.Sprintf("(%d in sync)", full+delta))
	})

	// The primary bucket is gone.
	deleteBucket(t, primary.S3Client(), bb.Name)

	// The documented step: copy.serve: copy (gardenlet hands the seed configuration's change to
	// every entry; here the entry's providerConfig carries it).
	step := time.Now()
	for _, e := range entries {
		setEntryConfig(t, env, e, withCopy("copy"))
	}
	env.WaitFor(t, be, time.Minute, "entry reconciled serving the copy", framework.SucceededAfter(step))
	// The Etcd still names the primary, but the primary is gone: etcd-backup holds the copy's
	// credentials at once (no two-phase switch: nothing could land in the primary anyway).
	etcdBackup = bucketOf(t, env, shoot, copyBucket)
	if !env.EventuallyHasEvent(t, be.Name, backupentry.ReasonBackupSwitchedAtOnce, "at once", 10*time.Second) {
		t.Errorf("no %s event", backupentry.ReasonBackupSwitchedAtOnce)
	}
	for k, v := range map[string]string{"accessKeyID": second.AccessKey, "secretAccessKey": second.SecretKey, "endpoint": second.Endpoint} {
		if got := string(etcdBackup.Data[k]); got != v {
			t.Errorf("etcd-backup's %s is %q; want the copy's", k, got)
		}
	}

	// etcd-backup-restore restores every key from the copy (gardenlet sets the Etcd's container
	// from etcd-backup's bucketName at the shoot's next reconcile, played here).
	rollEtcd(t, env, shoot, be, copyBucket)
	stack.MountSecret(t, mount, etcdBackup.Data)
	restored := stack.StartEtcd(t, c.Restore(t, mount, copyBucket, be.Name))
	for k, v := range want {
		if got := restored.Get(t, k); got != v {
			t.Errorf("restored from the copy: %s = %q; want %q", k, got, v)
		}
	}
	// New snapshots land in the copy.
	copyStore := env.StoreFor(t, second.SecretData())
	sidecar = c.Snapshotter(t, restored, mount, copyBucket, be.Name)
	framework.WaitCovered(t, ctx, copyStore, sidecar, copyBucket, be.Name+"/", restored.PutRev(t, "/registry/after-failover", "3"))
	want["/registry/after-failover"] = "3"
	sidecar.Stop()
	restored.Stop()

	// The entry copy pauses: the shoot writes the copy itself.
	env.WaitFor(t, be, time.Minute, "BackupsCopied Unknown ServingFromCopy", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionUnknown, entrycopy.ReasonServingFromCopy, copyBucket)
	})
	// On the gcp seed the step is refused and etcd-backup still names the primary.
	env.WaitFor(t, onGCP, time.Minute, "the gcp seed's entry refuses copy.serve", framework.FailedWith(gardencorev1beta1.ErrorConfigurationProblem))
	bucketOf(t, env, strings.TrimSuffix(onGCP.Name, "--1"), bb.Name)

	comingBack(t, r, be, mount, want)

	// Deleting the entry after coming back: its prefix is emptied in the primary and in the
	// copy, where the shoot wrote during the failover.
	env.DeleteAndWaitGone(t, be, connect.CopyPassDeadline+3*time.Minute)
	for what, s := range map[string]struct {
		store  conformance.Stores
		bucket string
	}{"the primary": {store, bb.Name}, "the copy": {copyStore, copyBucket}} {
		if got, err := conformance.ListKeys(ctx, s.store, s.bucket, be.Name+"/"); err != nil || len(got) != 0 {
			t.Errorf("%s still holds %v (%v) of the deleted entry", what, got, err)
		}
	}

	// The primary's store is gone altogether: the BackupBucket serving the copy still succeeds
	// (gardenlet reconciles no BackupEntry of a failed BackupBucket) and says what it serves.
	primary.Stop()
	step = time.Now()
	r.setBucketConfig(t, withCopy("copy"))
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled serving the copy, its primary unreachable", func(obj extensionsv1alpha1.Object) bool {
		return framework.SucceededAfter(step)(obj) &&
			condition(obj, backupbucket.ConditionBackupsServedFrom, gardencorev1beta1.ConditionTrue, connect.ServeReasonCopy, copyBucket, "is not converged")
	})
}

// serving is a bucket with a copy (copy.serve primary) on two MinIO servers of different root
// credentials, the copy's credentials in the garden namespace as gardenlet puts them.
type serving struct {
	env             *framework.Env
	bin             *framework.Binary // the extension's process env is attached to
	primary, second *awsstack.MinIO
	data            map[string][]byte
	bb              *extensionsv1alpha1.BackupBucket
	copyBucket      string
	// withCopy is the bucket's and its entries' providerConfig with copy.serve serve.
	withCopy func(serve string) string
	// withCopyEvery is withCopy with copy.interval (and rpo) interval.
	withCopyEvery func(serve, interval string) string
}

func startServing(t *testing.T, ctx context.Context, prefix string, flags ...string) *serving {
	t.Helper()
	primary, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(primary.Stop)
	second, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Stop)
	r := &serving{primary: primary, second: second, data: primary.SecretData(), withCopy: func(serve string) string {
		return minio + `,"copy":{"credentialsRef":"backup-copy","serve":"` + serve + `","providerConfig":` + minio + `}}}`
	}}
	r.withCopyEvery = func(serve, interval string) string {
		return minio + `,"copy":{"credentialsRef":"backup-copy","serve":"` + serve + `","interval":"` + interval + `","rpo":"` + interval + `","providerConfig":` + minio + `}}}`
	}
	r.bin = framework.StartBinary(t, ctx, &awsprovider.Provider{}, region, t.TempDir(), append([]string{"--entry-copy-interval", "2s"}, flags...)...)
	r.env = r.bin.Env
	r.env.CreateSecret(t, "garden", "ref-backup-copy", second.SecretData())
	r.bb = r.env.CreateBucket(t, framework.UniqueName(prefix), r.data, r.withCopy("primary"))
	r.env.WaitFor(t, r.bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	r.env.WaitFor(t, r.bb, time.Minute, "copy bucket ready", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, backupbucket.ConditionCopyBucketReady, gardencorev1beta1.ConditionTrue, backupbucket.ReasonCopyBucketReady)
	})
	r.copyBucket = r.bb.Name + "-copy"
	return r
}

// entryOn creates a shoot's namespace, labelled with the seed's provider as gardenlet labels
// it, and its reconciled entry.
func (r *serving) entryOn(t *testing.T, seedProvider string) *extensionsv1alpha1.BackupEntry {
	t.Helper()
	shoot := framework.UniqueName("shoot--fo--")
	ns := &corev1.Namespace{}
	ns.Name, ns.Labels = shoot, map[string]string{v1beta1constants.LabelSeedProvider: seedProvider}
	if err := r.env.K8s.Create(framework.Ctx(t), ns); err != nil {
		t.Fatal(err)
	}
	be := r.env.CreateEntryWithConfig(t, shoot+"--1", r.bb.Name, r.data, r.withCopy("primary"))
	r.env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	return be
}

// setBucketConfig sets the BackupBucket's providerConfig and asks for its reconcile.
func (r *serving) setBucketConfig(t *testing.T, config string) {
	t.Helper()
	cur := &extensionsv1alpha1.BackupBucket{}
	// The probe and the reconcile write the status meanwhile: an Update can meet a newer version.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := r.env.K8s.Get(framework.Ctx(t), client.ObjectKeyFromObject(r.bb), cur); err != nil {
			return err
		}
		cur.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
		return r.env.K8s.Update(framework.Ctx(t), cur)
	}); err != nil {
		t.Fatal(err)
	}
	r.env.Trigger(t, cur)
}

// bucketOf returns shoot's etcd-backup after checking that it names bucket.
func bucketOf(t *testing.T, env *framework.Env, shoot, bucket string) *corev1.Secret {
	t.Helper()
	_, s := env.SecretKeys(t, shoot, "etcd-backup")
	if got := string(s.Data[v1beta1constants.DataKeyBackupBucketName]); got != bucket {
		t.Fatalf("etcd-backup of %s names bucket %q; want %q", shoot, got, bucket)
	}
	return s
}

// setEntryConfig sets be's providerConfig and asks for its reconcile, as gardenlet does.
func setEntryConfig(t *testing.T, env *framework.Env, be *extensionsv1alpha1.BackupEntry, config string) {
	t.Helper()
	cur := &extensionsv1alpha1.BackupEntry{}
	// The controllers write the entry meanwhile (its status, its annotations): retried on conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.K8s.Get(framework.Ctx(t), client.ObjectKeyFromObject(be), cur); err != nil {
			return err
		}
		cur.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(config)}
		return env.K8s.Update(framework.Ctx(t), cur)
	}); err != nil {
		t.Fatal(err)
	}
	env.Trigger(t, cur)
}

// deleteBucket deletes every object version in bucket, then the bucket.
func deleteBucket(t *testing.T, s3c *s3.Client, bucket string) {
	t.Helper()
	ctx := framework.Ctx(t)
	p := s3.NewListObjectVersionsPaginator(s3c, &s3.ListObjectVersionsInput{Bucket: &bucket})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []s3types.ObjectIdentifier
		for _, v := range page.Versions {
			ids = append(ids, s3types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
		}
		for _, m := range page.DeleteMarkers {
			ids = append(ids, s3types.ObjectIdentifier{Key: m.Key, VersionId: m.VersionId})
		}
		for _, id := range ids {
			if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: id.Key, VersionId: id.VersionId}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s3c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
}

// comingBack: copy.serve primary after the failover, onto the primary bucket created again
// empty, where someone wrote one of the copy's snapshot keys differently. etcd-backup keeps
// naming the copy while the reverse pass cannot copy that snapshot back (it never overwrites;
// BackupsCopied says so); once the object is removed, the pass copies it and finds nothing
// missing, and the entry's reconcile names the primary (the copy's credentials kept until
// gardenlet rolls the Etcd onto the primary, played here); what the shoot writes into the copy
// until that roll reaches the primary too, and the real etcd-backup-restore restores every key
// from it.
func comingBack(t *testing.T, r *serving, be *extensionsv1alpha1.BackupEntry, mount string, want map[string]string) {
	t.Helper()
	ctx := framework.Ctx(t)
	env, bb, copyBucket := r.env, r.bb, r.copyBucket
	shoot := strings.TrimSuffix(be.Name, "--1")

	// The BackupBucket's reconcile creates the primary bucket again, empty.
	step := time.Now()
	r.setBucketConfig(t, r.withCopy("primary"))
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled, its primary created again", framework.SucceededAfter(step))
	inCopy, err := conformance.ListKeys(ctx, env.StoreFor(t, r.second.SecretData()), copyBucket, be.Name+"/")
	if err != nil || len(inCopy) == 0 {
		t.Fatalf("the copy holds %v (%v)", inCopy, err)
	}
	taken := inCopy[len(inCopy)-1]
	s3c := r.primary.S3Client()
	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bb.Name, Key: &taken, Body: strings.NewReader("someone else's")}); err != nil {
		t.Fatal(err)
	}

	step = time.Now()
	setEntryConfig(t, env, be, r.withCopy("primary"))
	env.WaitFor(t, be, time.Minute, "entry reconciled with copy.serve primary", framework.SucceededAfter(step))
	env.WaitFor(t, be, time.Minute, "BackupsCopied False CopyingBack: a snapshot is held differently in the primary", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionFalse, entrycopy.ReasonCopyingBack, "never overwritten", taken, "keeps naming the copy bucket")
	})
	step = time.Now()
	env.Trigger(t, be)
	env.WaitFor(t, be, time.Minute, "entry reconciled again", framework.SucceededAfter(step))
	bucketOf(t, env, shoot, copyBucket)

	// The operator removes the object: the pass copies the snapshot back, the entry's reconcile
	// names the primary in etcd-backup, which keeps the copy's credentials while the Etcd names
	// the copy bucket: the shoot goes on writing the copy, and the entry copy copies that back.
	deleteKey(t, s3c, bb.Name, taken)
	waitCredentials(t, env, shoot, bb.Name, r.second.Endpoint, "copied back, the Etcd not rolled")
	env.WaitFor(t, be, 2*time.Minute, "BackupsCopied True CopiedBack: the shoot writes the copy until the roll", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionTrue, entrycopy.ReasonCopiedBack, "the shoot writes the copy bucket")
	})
	// From here on the entry copy looks only every hour (copy.interval): nothing but the Etcd's
	// roll makes the final reverse pass in this test's time.
	step = time.Now()
	setEntryConfig(t, env, be, r.withCopyEvery("primary", "1h"))
	env.WaitFor(t, be, time.Minute, "entry reconciled with copy.interval 1h", framework.SucceededAfter(step))
	// Settled: the entry copy is idle, so the looks the change and the reconcile woke have run
	// with the new interval; each wake took the entry's look requeued on the old one (a work queue
	// holds an entry once), so the next is an hour away.
	waitIdle(t, r.bin.Ext.MetricsURL, "backupentry-copy-aws")
	if cur := current(t, env, be); !condition(cur, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionTrue, entrycopy.ReasonCopiedBack, "the shoot writes the copy bucket") {
		t.Fatalf("a reverse pass made with copy.interval 1h: not so; status: %+v", cur.Status.Conditions)
	}
	// The shoot's events etcd writes a snapshot into the copy after that pass, before gardenlet
	// rolls the Etcds onto the primary (a prefix etcd-main's restore does not read).
	late := be.Name + "/etcd-events/v2/Full-00000000-00000001-1764417600"
	if _, err := r.second.S3Client().PutObject(ctx, &s3.PutObjectInput{Bucket: &copyBucket, Key: &late, Body: strings.NewReader("late")}); err != nil {
		t.Fatal(err)
	}
	// gardenlet rolls the Etcd onto the primary (the shoot's reconcile, played here): the
	// extension gives etcd-backup the primary's credentials, and the copy goes on forward.
	rollEtcd(t, env, shoot, be, bb.Name)
	waitCredentials(t, env, shoot, bb.Name, r.primary.Endpoint, "the Etcd rolled onto the primary")
	env.WaitFor(t, be, 2*time.Minute, "the copy goes on forward", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionTrue, entrycopy.ReasonCopied)
	})
	etcdBackup := bucketOf(t, env, shoot, bb.Name)
	inPrimary, err := conformance.ListKeys(ctx, env.StoreFor(t, r.data), bb.Name, be.Name+"/")
	if err != nil {
		t.Fatal(err)
	}
	if !sets.New(inPrimary...).HasAll(append(inCopy, late)...) {
		t.Fatalf("after coming back the primary holds %v; want every key of the copy %v and %q, written into the copy after CopiedBack before the roll", inPrimary, inCopy, late)
	}
	stack.MountSecret(t, mount, etcdBackup.Data)
	restored := stack.StartEtcd(t, awsstack.S3Consumer.Restore(t, mount, bb.Name, be.Name))
	defer restored.Stop()
	for k, v := range want {
		if got := restored.Get(t, k); got != v {
			t.Errorf("restored from the primary after coming back: %s = %q; want %q", k, got, v)
		}
	}
}

// deleteKey deletes every version of key in bucket.
func deleteKey(t *testing.T, s3c *s3.Client, bucket, key string) {
	t.Helper()
	ctx := framework.Ctx(t)
	out, err := s3c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: &key})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range out.Versions {
		if *v.Key == key {
			if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key, VersionId: v.VersionId}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, m := range out.DeleteMarkers {
		if *m.Key == key {
			if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key, VersionId: m.VersionId}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
