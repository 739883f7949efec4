// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package consumer_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// customerKeyKeys are the keys etcd-backup holds for an operator secret with a CA, a
// customer-provided key (SSE-C) and both checksum modes: every key etcd-backup-restore's S3 store
// reads that the operator set (readAWSCredentialFromDir, s3_snapstore.go:273-372).
var customerKeyKeys = []string{"region", "accessKeyID", "secretAccessKey", "endpoint", "s3ForcePathStyle", "bucketName", "trustedCaCert",
	"sseCustomerKey", "sseCustomerAlgorithm", "requestChecksumCalculation", "responseChecksumValidation"}

func newCustomerKey(t *testing.T) string {
	t.Helper()
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(k)
}

// runCustomerKey is the consumer contract of a customer-provided key on MinIO over TLS (MinIO
// refuses SSE-C over http), its CA in trustedCaCert as the sidecar gets it:
//
//  1. etcd-backup holds the SSE-C keys and the checksum modes, unchanged.
//  2. etcd-backup-restore given it sends the key: MinIO refuses its uploads, because the sidecar
//     sends the MD5 of the key's base64 text instead of the key's (getSSECreds,
//     s3_snapstore.go:840-841; aws-sdk-go-v2 sends both fields as given). No snapshot is written
//     unencrypted: the snapshots fail loudly instead.
//  3. Given etcd-backup without the SSE-C keys (what this extension wrote before it passed them
//     on), it backs up and restores with the checksum modes: it accepts them.
//  4. Those snapshots, rewritten with the key as a sidecar that sends the key right would write
//     them, are listed by the inventory and restored by the drill with the entry's secret; a
//     wrong key and no key are each the drill's KeyRefused, never a damaged snapshot.
func runCustomerKey(t *testing.T, env *framework.Env, c stack.Consumer, minio *awsstack.MinIO) {
	began := time.Now()
	step := func(what string) { t.Logf("%5.1fs %s", time.Since(began).Seconds(), what) }
	operator := minio.SecretData()
	operator["sseCustomerKey"] = []byte(newCustomerKey(t))
	operator["sseCustomerAlgorithm"] = []byte("AES256")
	operator["requestChecksumCalculation"] = []byte("when_required")
	operator["responseChecksumValidation"] = []byte("WHEN_SUPPORTED") // read case-insensitively
	bb := env.CreateBucket(t, name("c-"), operator, awsConfigHead+"}")
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	shoot := name("shoot--k--")
	entry := shoot + "--1"
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, entry, bb.Name, operator)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	_, etcdBackup := env.SecretKeys(t, shoot, "etcd-backup")
	assertKeys(t, etcdBackup, customerKeyKeys)
	for _, k := range customerKeyKeys {
		if v, ok := operator[k]; ok && string(etcdBackup.Data[k]) != string(v) {
			t.Errorf("etcd-backup's %q differs from the operator's", k)
		}
	}
	step("bucket and entry reconciled; etcd-backup holds the customer key and the checksum modes")

	withKey := env.StoreFor(t, operator)
	db := stack.StartEtcd(t, filepath.Join(t.TempDir(), "etcd"))
	db.Put(t, "/registry/before-full", "1")
	mount := t.TempDir()
	stack.MountSecret(t, mount, etcdBackup.Data)
	sidecar := c.Snapshotter(t, db, mount, bb.Name, entry)
	for deadline := time.Now().Add(time.Minute); !strings.Contains(sidecar.Tail(), "InvalidArgument"); time.Sleep(200 * time.Millisecond) {
		if sidecar.Exited() || time.Now().After(deadline) {
			t.Fatalf("etcd-backup-restore with the customer key was not refused by MinIO (InvalidArgument) within a minute (exited: %v):\n%s", sidecar.Exited(), sidecar.Tail())
		}
	}
	sidecar.Stop()
	if f, d := framework.CountSnapshots(t, withKey, bb.Name, entry); f+d != 0 {
		t.Fatalf("%d full and %d delta snapshots written although MinIO refused the sidecar's key", f, d)
	}
	step("the sidecar's SSE-C uploads refused by MinIO (the MD5 it sends), nothing written")

	plain := maps.Clone(etcdBackup.Data)
	delete(plain, "sseCustomerKey")
	delete(plain, "sseCustomerAlgorithm")
	stack.MountSecret(t, mount, plain)
	sidecar = c.Snapshotter(t, db, mount, bb.Name, entry)
	withoutKey := env.StoreFor(t, without(operator, "sseCustomerKey", "sseCustomerAlgorithm"))
	waitSnapshots(t, sidecar, "a full snapshot", func() bool { f, _ := framework.CountSnapshots(t, withoutKey, bb.Name, entry); return f >= 1 })
	db.Put(t, "/registry/delta", "2")
	waitSnapshots(t, sidecar, "a delta snapshot", func() bool { _, d := framework.CountSnapshots(t, withoutKey, bb.Name, entry); return d >= 1 })
	sidecar.Stop()
	db.Stop()
	want := map[string]string{"/registry/before-full": "1", "/registry/delta": "2"}
	restored := stack.StartEtcd(t, c.Restore(t, mount, bb.Name, entry))
	for k, v := range want {
		if got := restored.Get(t, k); got != v {
			t.Errorf("restored etcd: %s = %q; want %q", k, got, v)
		}
	}
	restored.Stop()
	step("with the checksum modes alone the sidecar took a full and a delta snapshot and restored them")

	ctx := framework.Ctx(t)
	rewritten := 0
	err := withoutKey.ListObjects(ctx, bb.Name, entry+"/", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			if o.Noncurrent {
				continue
			}
			data, err := objectstore.ReadObject(ctx, withoutKey, bb.Name, o.Key)
			if err != nil {
				return err
			}
			if err := withKey.PutObject(ctx, bb.Name, o.Key, data); err != nil {
				return err
			}
			rewritten++
		}
		return nil
	})
	if err != nil || rewritten < 2 {
		t.Fatalf("rewriting the snapshots with the key: %d rewritten, %v", rewritten, err)
	}
	checkInventory(t, withKey, bb.Name, entry, sidecar)
	step("snapshots rewritten with the customer key; the inventory lists them")

	results := drillWith(t, withKey, bb.Name, entry, want)
	if results.Err != nil {
		t.Fatalf("the drill with the entry's customer key failed: %v", results.Err)
	}
	for what, store := range map[string]objectstore.DataPlane{
		"another key": env.StoreFor(t, withRaw(operator, "sseCustomerKey", newCustomerKey(t))),
		"no key":      withoutKey,
	} {
		r := drillWith(t, store, bb.Name, entry, nil)
		if drill.ReasonOf(r.Err) != drill.ReasonKeyRefused {
			t.Errorf("the drill with %s: %v; want reason %s", what, r.Err, drill.ReasonKeyRefused)
		}
	}
	step("the drill restored with the key; with another key and with none: KeyRefused")

	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	if f, d := framework.CountSnapshots(t, withKey, bb.Name, entry); f+d != 0 {
		t.Errorf("%d full and %d delta snapshots left after the entry's deletion", f, d)
	}
	env.DeleteAndWaitGone(t, bb, 2*time.Minute)
}

// drillWith drills the entry's one etcd through store and, when it restores, checks that it
// holds want.
func drillWith(t *testing.T, store objectstore.DataPlane, bucket, entry string, want map[string]string) drill.Result {
	t.Helper()
	results, err := drill.Drill(framework.Ctx(t), store, bucket, entry+"/", drill.Options{ScratchDir: t.TempDir(),
		Inspect: func(ctx context.Context, _ string, kv clientv3.KV) error {
			for k, v := range want {
				resp, err := kv.Get(ctx, k)
				if err != nil {
					return err
				}
				if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != v {
					t.Errorf("the drill's etcd: %s = %v; want %q", k, resp.Kvs, v)
				}
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 {
		t.Fatalf("drill results %+v; want one etcd", results)
	}
	return results[0]
}

func without(data map[string][]byte, keys ...string) map[string][]byte {
	out := maps.Clone(data)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func withRaw(data map[string][]byte, key, value string) map[string][]byte {
	out := maps.Clone(data)
	out[key] = []byte(value)
	return out
}
