// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/minio/madmin-go/v3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycopy"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// copyUserPolicy is the MinIO policy of the copy's user: everything on its copy bucket, and
// only reading objects of the primary bucket (the grant docs/copy.md tells the operator to give
// for a server-side copy).
func copyUserPolicy(primary, copyBucket string) []byte {
	return fmt.Appendf(nil, `{"Version":"2012-10-17","Statement":[
{"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::%[2]s","arn:aws:s3:::%[2]s/*"]},
{"Effect":"Allow","Action":["s3:GetObject","s3:GetObjectVersion"],"Resource":["arn:aws:s3:::%[1]s/*"]}]}`, primary, copyBucket)
}

// TestCopyInsideOneStore: the copy bucket in the primary's MinIO, written by a user of its own
// whom the operator granted read on the primary bucket: the entry copy copies inside the store
// (copy_object requests, no get_object or put_object of the controller: no snapshot's bytes pass
// through the extension) and says so in BackupsCopied. Without the grant (a second entry
// copied after the grant is taken back) it streams and says why.
func TestCopyInsideOneStore(t *testing.T) {
	ctx := context.Background()
	store, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Stop()
	bbName := framework.UniqueName("copy-")
	copyBucket := bbName + "-copy"
	admin, err := store.Admin()
	if err != nil {
		t.Fatal(err)
	}
	const copyUser, copySecret = "backup-copy", "backup-copy-secret-0123456789"
	if err := admin.AddUser(ctx, copyUser, copySecret); err != nil {
		t.Fatal(err)
	}
	if err := admin.AddCannedPolicy(ctx, "backup-copy", copyUserPolicy(bbName, copyBucket)); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AttachPolicy(ctx, madmin.PolicyAssociationReq{Policies: []string{"backup-copy"}, User: copyUser}); err != nil {
		t.Fatal(err)
	}
	copyData := store.SecretData()
	copyData["accessKeyID"], copyData["secretAccessKey"] = []byte(copyUser), []byte(copySecret)

	bin := framework.StartBinary(t, ctx, &awsprovider.Provider{}, region, t.TempDir(), "--entry-copy-interval", "2s")
	env, ext := bin.Env, bin.Ext
	data := store.SecretData()
	env.CreateSecret(t, "garden", "ref-backup-copy", copyData)
	// A pass a minute: the message of the pass that copied stays long enough to be read.
	config := minio + `,"copy":{"credentialsRef":"backup-copy","rpo":"15m","interval":"1m","providerConfig":` + minio + `}}}`
	bb := env.CreateBucket(t, bbName, data, config)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	env.WaitFor(t, bb, time.Minute, "copy bucket ready", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, backupbucket.ConditionCopyBucketReady, gardencorev1beta1.ConditionTrue, backupbucket.ReasonCopyBucketReady)
	})

	primaryStore, copyStore := env.StoreFor(t, data), env.StoreFor(t, copyData)
	// snapshots writes a full and a delta snapshot of entry into the primary, then creates the
	// entry, and waits for its first pass, which copies both (its message says how), and for the
	// copy to hold them.
	now := time.Now().Unix()
	snapshots := func(entry string, saying ...string) {
		t.Helper()
		want := []string{
			fmt.Sprintf("%s/etcd-main/v2/Full-%08d-%08d-%d", entry, 0, 10, now-120),
			fmt.Sprintf("%s/etcd-main/v2/Incr-%08d-%08d-%d", entry, 11, 20, now-60),
		}
		for _, k := range want {
			// Of the size the engine copies inside the store (smaller ones it streams).
			if err := primaryStore.PutObject(framework.Ctx(t), bb.Name, k, bytes.Repeat([]byte("s"), replication.DefaultServerSideMinBytes)); err != nil {
				t.Fatal(err)
			}
		}
		env.EnsureNamespace(t, strings.TrimSuffix(entry, "--1"))
		be := env.CreateEntryWithConfig(t, entry, bb.Name, data, config)
		env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
		env.WaitFor(t, be, 3*time.Minute, "BackupsCopied True, both copied in one pass", func(obj extensionsv1alpha1.Object) bool {
			return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionTrue, entrycopy.ReasonCopied, append([]string{"(2 in sync)"}, saying...)...)
		})
		if got, err := conformance.ListKeys(ctx, copyStore, copyBucket, entry+"/"); err != nil || !slices.Equal(got, want) {
			t.Fatalf("the copy holds %v (%v) of %s; want %v", got, err, entry, want)
		}
	}
	// requests is the extension's cloud requests of operation with a status code of class 2xx.
	requests := func(operation string) float64 {
		n := 0.0
		for _, s := range framework.ScrapeMetrics(t, ext.MetricsURL).Get("gardener_backup_cloud_requests_total", map[string]string{"operation": operation}) {
			if strings.HasPrefix(s.Labels["code"], "2") {
				n += s.Value
			}
		}
		return n
	}

	snapshots(framework.UniqueName("shoot--inside--")+"--1", "copied 2 snapshots inside the store (server-side)")
	if got := requests(objectstore.OpCopyObject); got == 0 {
		t.Errorf("no copy_object request succeeded; want the snapshots copied inside the store")
	}
	for _, op := range []string{objectstore.OpOpenObject, objectstore.OpPutObject} {
		if got := requests(op); got != 0 {
			t.Errorf("%v %s requests; want none: the snapshots' bytes must not pass through the extension", got, op)
		}
	}

	// The grant taken back: the copy's user manages and writes its copy bucket only. The next
	// entry is streamed (read with the entry's credentials, written with the copy's), and
	// BackupsCopied says why.
	if err := admin.AddCannedPolicy(ctx, "backup-copy", copyUserPolicy("no-such-bucket-granted", copyBucket)); err != nil {
		t.Fatal(err)
	}
	snapshots(framework.UniqueName("shoot--streamed--")+"--1", "streamed 2 snapshots through the extension", "refused a server-side copy", "forbidden")
	if got := requests(objectstore.OpOpenObject); got != 2 {
		t.Errorf("%v get_object requests; want 2, the streamed snapshots", got)
	}
}
