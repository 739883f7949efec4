// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

// lockedBucket is an S3 bucket made with Object Lock (versioning Enabled) and a governance
// default retention of a day: every snapshot version is locked, as on a hardened seed bucket.
const lockedBucket = "drill-locked"

// verdict is what one side made of a chain: the drill's reason ("" restorable) and the revision
// it restored to; etcdbrctl restore's success and the revision its data directory holds.
type verdict struct {
	reason   drill.Reason
	revision int64
}

// TestDrillJudgesTheChainARestoreUses changes the store after the real etcd-backup-restore wrote
// a chain, as operators and second writers do, and compares the drill with what `etcdbrctl
// restore` really does on the same store: each scenario's verdicts must agree.
func TestDrillJudgesTheChainARestoreUses(t *testing.T) {
	si, ok := standin.For(awsprovider.Type)
	if !ok {
		t.Fatal("no aws stand-in")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w, err := si.Start(ctx, t, si.Region)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	minio := w.Handle.(*awsstack.MinIO)
	client := minio.S3Client()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(lockedBucket), ObjectLockEnabledForBucket: aws.Bool(true),
		CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(minio.Region)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String(lockedBucket), ObjectLockConfiguration: &s3types.ObjectLockConfiguration{
		ObjectLockEnabled: s3types.ObjectLockEnabledEnabled,
		Rule:              &s3types.ObjectLockRule{DefaultRetention: &s3types.DefaultRetention{Mode: s3types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1)}},
	}}); err != nil {
		t.Fatal(err)
	}
	s := madeIn(t, ctx, si, w, lockedBucket, false)
	writer := s.store.(objectstore.Writer)
	marker := s.store.(conformance.ExcludeMarker)
	plainDelete := func(key string) {
		t.Helper()
		if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(lockedBucket), Key: aws.String(key)}); err != nil {
			t.Fatalf("plain DELETE of %s: %v", key, err)
		}
	}

	tests := []struct {
		name string
		// change alters the store after the backup; names is the chain, full snapshot first.
		change func(t *testing.T, names []string, content func(string) []byte)
		// restorable: etcdbrctl restore succeeds (to the backup's revision) and the drill says
		// restorable; otherwise the restore fails and the drill names wantReason.
		restorable bool
		wantReason drill.Reason
	}{
		{"a second writer's locked delta under a delete marker", func(t *testing.T, n []string, content func(string) []byte) {
			d, _ := drill.ParseKey("", "e/v2/"+filepath.Base(n[2]))
			bad := filepath.Dir(n[2]) + fmt.Sprintf("/Incr-%08d-%08d-%d", d.StartRevision-1, d.LastRevision+1, time.Now().Unix())
			if err := writer.PutObject(ctx, lockedBucket, bad, content(n[2])); err != nil {
				t.Fatal(err)
			}
			plainDelete(bad)
		}, false, drill.ReasonChainBroken},
		{"a delta re-uploaded damaged under its name", func(t *testing.T, n []string, content func(string) []byte) {
			data := content(n[2])
			if err := writer.PutObject(ctx, lockedBucket, n[2], flip(data, len(data)/2)); err != nil {
				t.Fatal(err)
			}
		}, true, ""},
		{"a damaged newer full snapshot, tagged to be excluded and deleted", func(t *testing.T, n []string, content func(string) []byte) {
			newer := newerFull(n)
			data := content(n[0])
			if err := writer.PutObject(ctx, lockedBucket, newer, flip(data, len(data)/2)); err != nil {
				t.Fatal(err)
			}
			if err := marker.MarkExcluded(ctx, lockedBucket, newer); err != nil {
				t.Fatal(err)
			}
			plainDelete(newer)
		}, true, ""},
		{"a damaged newer full snapshot deleted without the tag", func(t *testing.T, n []string, content func(string) []byte) {
			newer := newerFull(n)
			data := content(n[0])
			if err := writer.PutObject(ctx, lockedBucket, newer, flip(data, len(data)/2)); err != nil {
				t.Fatal(err)
			}
			plainDelete(newer)
		}, false, drill.ReasonHashMismatch},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			compare(t, ctx, s, fmt.Sprintf("shoot--versions--%d", i), tt.change, tt.restorable, tt.wantReason)
		})
	}
}

// TestDrillHonoursTheExcludeMark: on GCS (object metadata) and Azure (blob index tag) the mark
// alone makes etcd-backup-restore skip a snapshot; the drill must skip it too, and both judge
// the chain before it. A snapshot re-uploaded damaged is read live by both (no versions read).
func TestDrillHonoursTheExcludeMark(t *testing.T) {
	for _, typ := range []string{"gcp", "azure"} {
		t.Run(typ, func(t *testing.T) {
			si, ok := standin.For(typ)
			if !ok {
				t.Fatalf("no %s stand-in", typ)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			w, err := si.Start(ctx, t, si.Region)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			s := made(t, ctx, si, w)
			writer := s.store.(objectstore.Writer)
			marker := s.store.(conformance.ExcludeMarker)
			compare(t, ctx, s, "shoot--marked--full", func(t *testing.T, n []string, content func(string) []byte) {
				newer := newerFull(n)
				data := content(n[0])
				if err := writer.PutObject(ctx, s.bucket, newer, flip(data, len(data)/2)); err != nil {
					t.Fatal(err)
				}
				if err := marker.MarkExcluded(ctx, s.bucket, newer); err != nil {
					t.Fatal(err)
				}
			}, true, "")
			compare(t, ctx, s, "shoot--reuploaded", func(t *testing.T, n []string, content func(string) []byte) {
				data := content(n[2])
				if err := writer.PutObject(ctx, s.bucket, n[2], flip(data, len(data)/2)); err != nil {
					t.Fatal(err)
				}
			}, false, drill.ReasonHashMismatch)
		})
	}
}

// compare has the real etcd-backup-restore back up a chain under entry, changes the store
// (change gets the chain's keys, full snapshot first, and a reader of their current content),
// then drills it and runs `etcdbrctl restore` on the same store. restorable: the restore must
// succeed at the backup's revision and keys, and the drill restore the same; otherwise the
// restore must fail and the drill name wantReason.
func compare(t *testing.T, ctx context.Context, s standIn, entry string, change func(t *testing.T, names []string, content func(string) []byte), restorable bool, wantReason drill.Reason) {
	t.Helper()
	want, wantRev := backUp(t, ctx, s, entry, uncompressed.flags)
	chains, err := drill.Collect(ctx, s.store, s.bucket, entry+"/")
	if err != nil || len(chains) != 1 || chains[0].Err != nil || len(chains[0].Deltas) < 3 {
		t.Fatalf("the backup's chain: %+v %v", chains, err)
	}
	names := []string{chains[0].Full.Key}
	for _, d := range chains[0].Deltas {
		names = append(names, d.Key)
	}
	change(t, names, func(key string) []byte {
		data, err := objectstore.ReadObject(ctx, s.store, s.bucket, key)
		if err != nil {
			t.Fatal(err)
		}
		return data
	})

	var restored map[string]string
	results, err := drill.Drill(ctx, s.store, s.bucket, entry+"/", drill.Options{ScratchDir: t.TempDir(),
		Inspect: func(ctx context.Context, _ string, kv clientv3.KV) error {
			var err error
			restored, err = readKVs(ctx, kv)
			return err
		}})
	if err != nil || len(results) != 1 {
		t.Fatalf("drill: %+v %v", results, err)
	}
	got := verdict{reason: drill.ReasonOf(results[0].Err), revision: results[0].Revision}

	mount := t.TempDir()
	stack.MountSecret(t, mount, s.secret)
	dataDir, log, restoreErr := s.consumer.TryRestore(t, mount, s.bucket, entry)
	t.Logf("drill: %v (revision %d); etcdbrctl restore: %v", results[0].Err, got.revision, restoreErr)
	if restorable {
		if restoreErr != nil {
			t.Fatalf("etcdbrctl restore failed, the scenario expects it to restore: %v\n%s", restoreErr, log)
		}
		db := stack.StartEtcd(t, dataDir)
		kvs, rev := rangeAll(t, db)
		db.Stop()
		if rev != wantRev || !maps.Equal(kvs, want) {
			t.Fatalf("etcdbrctl restored revision %d (want %d), keys differ: %v", rev, wantRev, diff(kvs, want))
		}
		if got.reason != "" || got.revision != wantRev || !maps.Equal(restored, want) {
			t.Fatalf("etcdbrctl restored revision %d; the drill: %v at revision %d", rev, results[0].Err, got.revision)
		}
		return
	}
	if restoreErr == nil {
		t.Fatalf("etcdbrctl restore succeeded, the scenario expects it to fail\n%s", log)
	}
	if got.reason != wantReason {
		t.Fatalf("etcdbrctl restore failed; the drill: %q (%v), want %q", got.reason, results[0].Err, wantReason)
	}
}

// newerFull names a full snapshot after the chain's last revision, written later.
func newerFull(names []string) string {
	last, _ := drill.ParseKey("", "e/v2/"+filepath.Base(names[len(names)-1]))
	return filepath.Dir(names[0]) + fmt.Sprintf("/Full-00000000-%08d-%d", last.LastRevision, time.Now().Unix()+60)
}
