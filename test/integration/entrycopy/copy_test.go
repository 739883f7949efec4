// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package entrycopy_test runs the real aws binary (as the chart runs it) on envtest with two
// MinIO servers of different root credentials: the primary and the copy a bucket's `copy:`
// declares, the copy's credentials in the garden namespace as gardenlet puts them (ref-<name>).
package entrycopy_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycopy"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const region = "eu-central-1"

// minio is the aws providerConfig of a MinIO bucket (settings MinIO does not implement off).
const minio = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]`

func condition(obj extensionsv1alpha1.Object, t gardencorev1beta1.ConditionType, status gardencorev1beta1.ConditionStatus, reason string, saying ...string) bool {
	c := v1beta1helper.GetCondition(obj.GetExtensionStatus().GetConditions(), t)
	if c == nil || c.Status != status || c.Reason != reason {
		return false
	}
	for _, s := range saying {
		if !strings.Contains(c.Message, s) {
			return false
		}
	}
	return true
}

func TestCopyToASecondStore(t *testing.T) {
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
	if primary.SecretKey == second.SecretKey {
		t.Fatal("both servers have the same root credentials")
	}
	bin := framework.StartBinary(t, ctx, &awsprovider.Provider{}, region, t.TempDir(), "--entry-copy-interval", "2s")
	env, ext := bin.Env, bin.Ext
	data := primary.SecretData()
	env.CreateSecret(t, "garden", "ref-backup-copy", second.SecretData())

	config := minio + `,"copy":{"credentialsRef":"backup-copy","rpo":"15m","providerConfig":` + minio + `}}}`
	bb := env.CreateBucket(t, framework.UniqueName("copy-"), data, config)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	env.WaitFor(t, bb, time.Minute, "copy bucket ready", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, backupbucket.ConditionCopyBucketReady, gardencorev1beta1.ConditionTrue, backupbucket.ReasonCopyBucketReady)
	})
	copyBucket := bb.Name + "-copy"
	// Hardened as the primary: default encryption and the TLS-only policy (the aws management's).
	s3c := second.S3Client()
	if _, err := s3c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: &copyBucket}); err != nil {
		t.Fatalf("copy bucket default encryption: %v", err)
	}
	if p, err := s3c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &copyBucket}); err != nil || p.Policy == nil || !strings.Contains(*p.Policy, "aws:SecureTransport") {
		t.Fatalf("copy bucket policy %v, %v; want the TLS-only statement", p, err)
	}

	entry := framework.UniqueName("shoot--copy--") + "--1"
	neighbour := strings.TrimSuffix(entry, "--1") + "0--1" // a prefix that begins like the entry's
	snaps := writeSnapshots(t, env, bb.Name, data, config, entry, neighbour)
	copyStore := env.StoreFor(t, second.SecretData())
	be := &extensionsv1alpha1.BackupEntry{}
	be.Name = entry
	// A pass before the snapshots were written is True too (nothing to copy): wait for the pass
	// that holds both.
	env.WaitFor(t, be, 2*time.Minute, "BackupsCopied True with both snapshots", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionTrue, entrycopy.ReasonCopied, "(2 in sync)")
	})
	nb := &extensionsv1alpha1.BackupEntry{}
	nb.Name = neighbour
	env.WaitFor(t, nb, 2*time.Minute, "the neighbour's BackupsCopied True with both snapshots", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionTrue, entrycopy.ReasonCopied, "(2 in sync)")
	})
	for _, name := range []string{entry, neighbour} {
		got, err := conformance.ListKeys(ctx, copyStore, copyBucket, name+"/")
		if err != nil || !slices.Equal(got, snaps[name]) {
			t.Fatalf("the copy holds %v (%v) of %s; want %v", got, err, name, snaps[name])
		}
	}
	m := framework.ScrapeMetrics(t, ext.MetricsURL)
	if got := m.Get("gardener_backup_entry_copy_lag_seconds", map[string]string{"entry": entry, "bucket": bb.Name, "copy_bucket": copyBucket}); len(got) != 1 || got[0].Value != 0 {
		t.Errorf("copy lag of %s = %v; want one series, 0", entry, got)
	}
	// Two servers: the copy's store has no bucket of the entry's, so its server-side copy is
	// refused and every snapshot is streamed: read from the primary and written to the copy.
	for _, op := range []string{"get_object", "put_object"} {
		n := 0.0
		for _, s := range m.Get("gardener_backup_cloud_requests_total", map[string]string{"operation": op, "code": "200"}) {
			n += s.Value
		}
		if n < 4 {
			t.Errorf("%v %s requests succeeded; want the 4 snapshots streamed", n, op)
		}
	}

	// The entry's deletion empties its prefix in both stores and nothing else; in the copy only
	// when a pass of the entry copy begun before the deletion has ended (CopyPassWaitError:
	// connect.CopyPassDeadline and a margin after the deletionTimestamp).
	env.DeleteAndWaitGone(t, be, connect.CopyPassDeadline+3*time.Minute)
	deletedInBoth(t, env.StoreFor(t, data), bb.Name, copyStore, copyBucket, entry, neighbour, snaps[neighbour])

	// The copy store stops: the lag is unknown, never "caught up".
	second.Stop()
	env.WaitFor(t, nb, 2*time.Minute, "BackupsCopied Unknown CopyUnavailable", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionUnknown, entrycopy.ReasonCopyUnavailable)
	})
	m = framework.ScrapeMetrics(t, ext.MetricsURL)
	if got := m.Get("gardener_backup_entry_copy_lag_seconds", map[string]string{"entry": neighbour}); len(got) != 0 {
		t.Errorf("copy lag of %s = %v while the copy cannot be read; want no series", neighbour, got)
	}
}

// writeSnapshots creates each entry of bucket with providerConfig config, waits for its
// reconcile, and writes two snapshots of it (a full and a delta, a minute apart) into the
// primary; it returns the keys written by entry.
func writeSnapshots(t *testing.T, env *framework.Env, bucket string, data map[string][]byte, config string, entries ...string) map[string][]string {
	t.Helper()
	now := time.Now().Unix()
	snaps := map[string][]string{}
	for _, name := range entries {
		env.EnsureNamespace(t, strings.TrimSuffix(name, "--1"))
		be := env.CreateEntryWithConfig(t, name, bucket, data, config)
		env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
		snaps[name] = []string{
			fmt.Sprintf("%s/etcd-main/v2/Full-%08d-%08d-%d", name, 0, 10, now-120),
			fmt.Sprintf("%s/etcd-main/v2/Incr-%08d-%08d-%d", name, 11, 20, now-60),
		}
	}
	store := env.StoreFor(t, data)
	for _, keys := range snaps {
		for _, k := range keys {
			if err := store.PutObject(framework.Ctx(t), bucket, k, []byte("snapshot "+k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return snaps
}

// deletedInBoth checks that the deleted entry's prefix is empty in the primary and in the copy,
// and that the neighbour still holds its snapshots in both.
func deletedInBoth(t *testing.T, primary conformance.Stores, bucket string, copyStore conformance.Stores, copyBucket, entry, neighbour string, kept []string) {
	t.Helper()
	for _, s := range []struct {
		store  conformance.Stores
		bucket string
	}{{primary, bucket}, {copyStore, copyBucket}} {
		if got, err := conformance.ListKeys(framework.Ctx(t), s.store, s.bucket, entry+"/"); err != nil || len(got) != 0 {
			t.Errorf("%s still holds %v (%v) of the deleted entry", s.bucket, got, err)
		}
		if got, err := conformance.ListKeys(framework.Ctx(t), s.store, s.bucket, neighbour+"/"); err != nil || !slices.Equal(got, kept) {
			t.Errorf("%s holds %v (%v) of the neighbour; want it untouched", s.bucket, got, err)
		}
	}
}
