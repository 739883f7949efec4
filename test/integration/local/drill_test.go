package local_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	localapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	localprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

// TestRestoreDrillOfRealSnapshots: the real etcd-backup-restore (Local storage provider) backs up
// a real etcd into a bucket directory; the restore drill reads them through the local data plane
// and restores exactly the keys written, without changing the bucket.
func TestRestoreDrillOfRealSnapshots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	s := conformance.StoresFor(t, &localprovider.Provider{Root: dir}, provider.Credentials{Data: map[string][]byte{}}, &localapi.BackupBucketConfig{})
	const bucket, entry = "drill-bucket", "shoot--drill--local"
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: bucket}); err != nil {
		t.Fatal(err)
	}
	mount := t.TempDir()
	stack.MountSecret(t, mount, map[string][]byte{"bucketName": []byte(bucket), "hostPath": []byte(dir)})
	db := stack.StartEtcd(t, filepath.Join(t.TempDir(), "etcd"))
	want := map[string]string{}
	sidecar := standin.Local.Snapshotter(t, db, mount, bucket, entry)
	for i := range 3 {
		k, v := fmt.Sprintf("/registry/k%d", i), fmt.Sprint(i)
		db.Put(t, k, v)
		want[k] = v
		deadline := time.Now().Add(time.Minute)
		for count(t, ctx, s, bucket, entry) < i+1 {
			if time.Now().After(deadline) || sidecar.Exited() {
				t.Fatalf("no snapshot %d after a minute:\n%s", i+1, sidecar.Tail())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	sidecar.Stop()
	db.Stop()
	before, err := conformance.ListKeys(ctx, s, bucket, "")
	if err != nil {
		t.Fatal(err)
	}

	restored := map[string]string{}
	results, err := drill.Drill(ctx, s, bucket, entry+"/", drill.Options{
		ScratchDir: t.TempDir(),
		Inspect: func(ctx context.Context, _ string, kv clientv3.KV) error {
			resp, err := kv.Get(ctx, "/registry/", clientv3.WithPrefix())
			if err != nil {
				return err
			}
			for _, item := range resp.Kvs {
				restored[string(item.Key)] = string(item.Value)
			}
			return nil
		},
	})
	if err != nil || len(results) != 1 || results[0].Err != nil {
		t.Fatalf("drill = %+v, %v", results, err)
	}
	if !maps.Equal(restored, want) {
		t.Errorf("the drill restored %v; want %v", restored, want)
	}
	if after, err := conformance.ListKeys(ctx, s, bucket, ""); err != nil || fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the drill changed the bucket: %v -> %v (%v)", before, after, err)
	}
	t.Logf("restored %s and %d deltas, %d keys", results[0].Full, results[0].Deltas, results[0].Keys)
}

// count is the number of snapshots under the entry's prefix.
func count(t *testing.T, ctx context.Context, s objectstore.DataPlane, bucket, entry string) int {
	t.Helper()
	keys, err := conformance.ListKeys(ctx, s, bucket, entry+"/")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range keys {
		if strings.Contains(k, "/Full-") || strings.Contains(k, "/Incr-") {
			n++
		}
	}
	return n
}
