// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package binary_test runs the real aws binary as a process (as the chart runs it) against a real
// kube-apiserver and etcd (envtest) and MinIO, and scrapes every metric of the extension from
// its metrics endpoint while a bucket and an entry go through their lives.
package binary_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const region = "eu-central-1"

const minioConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`

func TestEveryMetricFromTheRunningBinary(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	minio, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	defer minio.Stop()
	bin := framework.StartBinary(t, ctx, &awsprovider.Provider{}, region, dir, "--bucket-probe-interval", "1s", "--entry-inventory-interval", "2s")
	env, ext := bin.Env, bin.Ext
	data := minio.SecretData()
	delete(data, "region")

	bb := env.CreateBucket(t, framework.UniqueName("metrics-"), data, minioConfig)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	env.WaitFor(t, bb, time.Minute, "bucket available", framework.Available(gardencorev1beta1.ConditionTrue, "Available", ""))
	entry := framework.UniqueName("shoot--metrics--") + "--1"
	env.EnsureNamespace(t, strings.TrimSuffix(entry, "--1"))
	be := env.CreateEntry(t, entry, bb.Name, data)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)

	// Snapshots as etcd-backup-restore names them: a full one a minute ago, a delta after it.
	store := env.StoreFor(t, data)
	now := time.Now().Unix()
	full := fmt.Sprintf("%s/etcd-main/v2/Full-%08d-%08d-%d", entry, 1, 10, now-60)
	delta := fmt.Sprintf("%s/etcd-main/v2/Incr-%08d-%08d-%d", entry, 11, 20, now-30)
	for key, size := range map[string]int{full: 300, delta: 40} {
		if err := store.PutObject(framework.Ctx(t), bb.Name, key, make([]byte, size)); err != nil {
			t.Fatal(err)
		}
	}
	env.WaitFor(t, be, time.Minute, "inventory of both snapshots", func(obj extensionsv1alpha1.Object) bool {
		ps, err := entryinfo.ReadProviderStatus(obj.(*extensionsv1alpha1.BackupEntry))
		return err == nil && ps.Inventory != nil && ps.Inventory.Objects == 2
	})

	m := framework.ScrapeMetrics(t, ext.MetricsURL)
	checks := []struct {
		name   string
		labels map[string]string
		ok     func(float64) bool
		want   string
	}{
		{"gardener_backup_reconciles_total", map[string]string{"kind": "BackupBucket", "operation": "reconcile", "result": "succeeded"}, atLeastOne, ">= 1"},
		{"gardener_backup_reconciles_total", map[string]string{"kind": "BackupEntry", "operation": "reconcile", "result": "succeeded"}, atLeastOne, ">= 1"},
		{"gardener_backup_cloud_requests_total", map[string]string{"provider": "aws", "operation": "ensure_bucket", "code": "200"}, atLeastOne, ">= 1"},
		{"gardener_backup_cloud_requests_total", map[string]string{"provider": "aws", "operation": "probe", "code": "200"}, atLeastOne, ">= 1"},
		{"gardener_backup_cloud_requests_total", map[string]string{"provider": "aws", "operation": "inventory", "code": "200"}, atLeastOne, ">= 1"},
		{"gardener_backup_cloud_request_duration_seconds", map[string]string{"provider": "aws", "operation": "probe"}, atLeastOne, "observations >= 1"},
		{"gardener_backup_bucket_available", map[string]string{"bucket": bb.Name, "credentials": "operator"}, equal(1), "1"},
		{"gardener_backup_bucket_probe_duration_seconds", map[string]string{"credentials": "operator"}, atLeastOne, "observations >= 1"},
		{"gardener_backup_entry_latest_snapshot_timestamp_seconds", map[string]string{"entry": entry, "etcd": "etcd-main", "kind": "full"}, equal(float64(now - 60)), fmt.Sprint(now - 60)},
		{"gardener_backup_entry_latest_snapshot_timestamp_seconds", map[string]string{"entry": entry, "etcd": "etcd-main", "kind": "delta"}, equal(float64(now - 30)), fmt.Sprint(now - 30)},
		{"gardener_backup_entry_objects", map[string]string{"entry": entry}, equal(2), "2"},
		{"gardener_backup_entry_bytes", map[string]string{"entry": entry}, equal(340), "340"},
		{"gardener_backup_entry_backups_fresh", map[string]string{"entry": entry, "bucket": bb.Name}, equal(1), "1"},
		{"gardener_backup_entry_inventory_duration_seconds", nil, atLeastOne, "observations >= 1"},
		{"gardener_backup_entry_inventory_pages_total", nil, atLeastOne, ">= 1"},
	}
	for _, c := range checks {
		got := m.Get(c.name, c.labels)
		if len(got) != 1 || !c.ok(got[0].Value) {
			t.Errorf("%s%v = %v, want one series with %s", c.name, c.labels, got, c.want)
		}
	}

	// An entry whose deletion fails (its credentials broken) shows since when it is being
	// deleted; once repaired, the deletion's objects are counted and its series go.
	env.SetEntrySecretKey(t, be, "secretAccessKey", "wrong")
	env.DeleteFailingWith(t, be, gardencorev1beta1.ErrorInfraUnauthenticated)
	m = framework.ScrapeMetrics(t, ext.MetricsURL)
	if got := m.Get("gardener_backup_deletion_started_timestamp_seconds", map[string]string{"kind": "BackupEntry", "name": entry}); len(got) != 1 || got[0].Value != float64(be.DeletionTimestamp.Unix()) {
		t.Errorf("deletion_started_timestamp_seconds of the failing deletion = %v, want %d", got, be.DeletionTimestamp.Unix())
	}
	if got := m.Get("gardener_backup_deletion_remaining_objects", map[string]string{"kind": "BackupEntry", "name": entry}); len(got) != 1 {
		t.Errorf("deletion_remaining_objects of the failing deletion = %v", got)
	}
	if got := m.Get("gardener_backup_reconciles_total", map[string]string{"kind": "BackupEntry", "operation": "delete", "result": string(gardencorev1beta1.ErrorInfraUnauthenticated)}); len(got) != 1 || got[0].Value < 1 {
		t.Errorf("reconciles_total of the failing deletion = %v", got)
	}
	failing := map[string]string{"kind": "BackupEntry", "name": entry, "operation": "delete", "code": string(gardencorev1beta1.ErrorInfraUnauthenticated)}
	if got := m.Get("gardener_backup_operation_failing_since_timestamp_seconds", failing); len(got) != 1 || got[0].Value < float64(be.DeletionTimestamp.Unix()) {
		t.Errorf("operation_failing_since_timestamp_seconds of the failing deletion = %v, want one series since the deletion began", got)
	}
	env.SetEntrySecretKey(t, be, "secretAccessKey", string(data["secretAccessKey"]))
	env.Trigger(t, be)
	waitGone(t, env.K8s, be)
	m = framework.ScrapeMetrics(t, ext.MetricsURL)
	if got := m.Get("gardener_backup_deleted_objects_total", map[string]string{"kind": "BackupEntry"}); len(got) != 1 || got[0].Value < 2 {
		t.Errorf("deleted_objects_total{BackupEntry} = %v, want >= 2", got)
	}
	for _, name := range []string{"gardener_backup_deletion_started_timestamp_seconds", "gardener_backup_deletion_remaining_objects", "gardener_backup_operation_failing_since_timestamp_seconds"} {
		if got := m.Get(name, map[string]string{"name": entry}); len(got) != 0 {
			t.Errorf("%s of a finished deletion = %v, want no series", name, got)
		}
	}
	for _, name := range []string{"gardener_backup_entry_objects", "gardener_backup_entry_bytes", "gardener_backup_entry_backups_fresh", "gardener_backup_entry_latest_snapshot_timestamp_seconds"} {
		if got := m.Get(name, map[string]string{"entry": entry}); len(got) != 0 {
			t.Errorf("%s of a deleted entry = %v, want no series", name, got)
		}
	}

	if err := env.K8s.Delete(framework.Ctx(t), bb); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env.K8s, bb)
	m = framework.ScrapeMetrics(t, ext.MetricsURL)
	if got := m.Get("gardener_backup_reconciles_total", map[string]string{"kind": "BackupBucket", "operation": "delete", "result": "succeeded"}); len(got) != 1 {
		t.Errorf("reconciles_total of the bucket's deletion = %v", got)
	}
	if got := m.Get("gardener_backup_bucket_available", map[string]string{"bucket": bb.Name}); len(got) != 0 {
		t.Errorf("bucket_available of a deleted bucket = %v, want no series", got)
	}
}

func waitGone(t *testing.T, k8s client.Client, obj client.Object) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if err := k8s.Get(framework.Ctx(t), client.ObjectKeyFromObject(obj), obj); apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is not gone within a minute", obj.GetName())
		}
	}
}

func atLeastOne(v float64) bool          { return v >= 1 }
func equal(n float64) func(float64) bool { return func(v float64) bool { return v == n } }
