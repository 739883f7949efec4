// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// storeFunc builds a store from a secret's data (framework.Env.StoreFor, or a provider's
// providerWorld.storeFor).
type storeFunc func(t *testing.T, data map[string][]byte) conformance.Stores

// etcdHistory is a shoot's etcd across migrations: what it holds, and every snapshot the real
// etcd-backup-restore wrote for it, by the phase that wrote it.
type etcdHistory struct {
	storeFor  storeFunc      // the provider's stores
	consumer  stack.Consumer // how etcd-druid runs etcd-backup-restore for the provider
	entry     string
	want      map[string]string // every key etcd holds, with its value
	snapshots map[string]string // snapshot object key -> phase ("before", "during", "after")
}

// run is one phase of the shoot's life on a seed: etcd (new, or on dataDir restored from the
// entry's backups: it must hold every key so far) with etcd-backup-restore beside it, mounted
// etcdBackup as etcd-druid mounts it. Two writes, each waited for until a snapshot holds it; the
// phase's new snapshots are recorded.
func (h *etcdHistory) run(t *testing.T, phase string, etcdBackup map[string][]byte, dataDir string) {
	t.Helper()
	bucket := string(etcdBackup["bucketName"])
	store := h.storeFor(t, etcdBackup)
	prefix := h.entry + "/etcd-main/"
	db := startEtcdOn(t, dataDir)
	defer db.Stop()
	for k, v := range h.want {
		if got := db.Get(t, k); got != v {
			t.Fatalf("%s: etcd restored from bucket %s: %s = %q; want %q", phase, bucket, k, got, v)
		}
	}
	known := currentKeys(t, store, bucket, prefix)
	mount := t.TempDir()
	stack.MountSecret(t, mount, etcdBackup)
	sidecar := h.consumer.Snapshotter(t, db, mount, bucket, h.entry)
	defer sidecar.Stop()
	for i := 1; i <= 2; i++ {
		key := fmt.Sprintf("/registry/%s-%d", phase, i)
		rev := db.PutRev(t, key, phase)
		h.want[key] = phase
		eventually(t, time.Minute, fmt.Sprintf("%s: a snapshot in bucket %s holding revision %d", phase, bucket, rev), func() (bool, string) {
			if sidecar.Exited() {
				t.Fatalf("%s: etcd-backup-restore exited (%v):\n%s", phase, sidecar.Err(), sidecar.Tail())
			}
			keys := currentKeys(t, store, bucket, prefix)
			for _, k := range keys {
				if end, _, ok := stack.SnapshotEndRevision(k); ok && end >= rev && !slices.Contains(known, k) {
					return true, ""
				}
			}
			return false, fmt.Sprintf("keys %v; sidecar log:\n%s", keys, sidecar.Tail())
		})
	}
	sidecar.Stop()
	var written []string
	for _, k := range currentKeys(t, store, bucket, prefix) {
		if _, _, ok := stack.SnapshotEndRevision(k); ok && !slices.Contains(known, k) {
			h.snapshots[k] = phase
			written = append(written, k)
		}
	}
	t.Logf("%s: etcd-backup-restore wrote %d snapshots into bucket %s: %v", phase, len(written), bucket, written)
}

// restore runs `etcdbrctl restore` from the entry's backups with etcdBackup mounted, into a new
// data directory.
func (h *etcdHistory) restore(t *testing.T, etcdBackup map[string][]byte) string {
	t.Helper()
	mount := t.TempDir()
	stack.MountSecret(t, mount, etcdBackup)
	return h.consumer.Restore(t, mount, string(etcdBackup["bucketName"]), h.entry)
}

// startEtcdOn starts etcd on dataDir ("" for a new member).
func startEtcdOn(t *testing.T, dataDir string) *stack.Etcd {
	t.Helper()
	if dataDir == "" {
		dataDir = filepath.Join(t.TempDir(), "etcd")
	}
	return stack.StartEtcd(t, dataDir)
}

// copyBackups stands in for etcd-druid's copy job of a migration: every current snapshot object
// under "<entry>/etcd-main/" read with from (source-etcd-backup) and written with to (etcd-backup).
func copyBackups(t *testing.T, storeFor storeFunc, from, to map[string][]byte, entry string) {
	t.Helper()
	src, dst := storeFor(t, from), storeFor(t, to)
	srcBucket, dstBucket := string(from["bucketName"]), string(to["bucketName"])
	keys := currentKeys(t, src, srcBucket, entry+"/etcd-main/")
	if len(keys) == 0 {
		t.Fatalf("nothing to copy under %s/etcd-main/ in bucket %s", entry, srcBucket)
	}
	for _, k := range keys {
		data, err := objectstore.ReadObject(ctx(), src, srcBucket, k)
		if err != nil {
			t.Fatalf("copy: reading %s from bucket %s with source-etcd-backup: %v", k, srcBucket, err)
		}
		if err := dst.PutObject(ctx(), dstBucket, k, data); err != nil {
			// A store with a retention policy on the whole bucket (GCS) refuses to overwrite an
			// object it still holds: the copy back finds the snapshots written there before the
			// first migration. The same content there is a copied snapshot.
			if have, gerr := objectstore.ReadObject(ctx(), dst, dstBucket, k); gerr == nil && bytes.Equal(have, data) {
				t.Logf("copy: %s is in bucket %s already with the same content (overwriting it: %v)", k, dstBucket, err)
				continue
			}
			t.Fatalf("copy: writing %s into bucket %s with etcd-backup: %v", k, dstBucket, err)
		}
	}
	t.Logf("copied %d snapshot objects from bucket %s to %s", len(keys), srcBucket, dstBucket)
}

// currentKeys is every key under prefix whose current version is an object (what a plain read
// returns), sorted.
func currentKeys(t *testing.T, store objectstore.DataPlane, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	err := store.ListObjects(ctx(), bucket, prefix, func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			if !o.Noncurrent {
				keys = append(keys, o.Key)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing %s in bucket %s: %v", prefix, bucket, err)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func contains(keys []string, key string) bool { return slices.Contains(keys, key) }

// assertNotExpired fails for every enabled lifecycle rule of the bucket that expires current
// versions (Expiration by days or date) and covers one of keys: its prefix (of the filter, of its
// "and", or the rule's legacy one) starts the key, and the key's object carries every tag it
// filters on. Only the extension writes the test bucket's rules.
func assertNotExpired(t *testing.T, bucket string, keys []string) {
	t.Helper()
	s3c := minio.S3Client()
	lc, err := s3c.GetBucketLifecycleConfiguration(ctx(), &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchLifecycleConfiguration" {
		return
	}
	if err != nil {
		t.Fatalf("reading bucket %s's lifecycle rules: %v", bucket, err)
	}
	for _, r := range lc.Rules {
		if r.Status != s3types.ExpirationStatusEnabled || r.Expiration == nil || (aws.ToInt32(r.Expiration.Days) == 0 && r.Expiration.Date == nil) {
			continue
		}
		prefix, tags := aws.ToString(r.Prefix), []s3types.Tag(nil) //nolint:staticcheck // the legacy rule prefix counts too
		if f := r.Filter; f != nil {
			switch {
			case f.And != nil:
				prefix, tags = aws.ToString(f.And.Prefix), f.And.Tags
			case f.Tag != nil:
				tags = []s3types.Tag{*f.Tag}
			default:
				prefix = aws.ToString(f.Prefix)
			}
		}
		for _, k := range keys {
			if !strings.HasPrefix(k, prefix) || !hasTags(t, bucket, k, tags) {
				continue
			}
			t.Errorf("lifecycle rule %q of bucket %s (prefix %q, tags %v, expiration after %d days) expires the live entry's new snapshot %s",
				aws.ToString(r.ID), bucket, prefix, tagList(tags), aws.ToInt32(r.Expiration.Days), k)
		}
	}
}

// hasTags reports whether the object key carries every tag of want.
func hasTags(t *testing.T, bucket, key string, want []s3types.Tag) bool {
	t.Helper()
	if len(want) == 0 {
		return true
	}
	out, err := minio.S3Client().GetObjectTagging(ctx(), &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("reading the tags of %s in bucket %s: %v", key, bucket, err)
	}
	for _, w := range want {
		if !slices.ContainsFunc(out.TagSet, func(g s3types.Tag) bool {
			return aws.ToString(g.Key) == aws.ToString(w.Key) && aws.ToString(g.Value) == aws.ToString(w.Value)
		}) {
			return false
		}
	}
	return true
}

func tagList(tags []s3types.Tag) []string {
	var out []string
	for _, tg := range tags {
		out = append(out, aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
	}
	return out
}
