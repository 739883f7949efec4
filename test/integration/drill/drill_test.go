// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package drill_test drills snapshots the real etcd-backup-restore (the version hack/tools.sh
// pins) wrote of a real etcd into every provider's stand-in (test/standin: MinIO, fake-gcs-server
// behind the GCS front, Azurite, Swift and Keystone, a directory) with the provider's etcd-backup
// secret, read through the
// provider's DataPlane: the drill restores them to exactly the keys and revision the etcd held;
// the same snapshots, damaged one way each, give each their reason; nothing is written to the
// store.
package drill_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
	_ "github.com/gardener-extension-backup/gardener-extension-backup/test/standin/all"
)

const bucket = "drill-backups"

// mapSource is a copy of the snapshots, to damage without touching the bucket.
type mapSource map[string][]byte

func (m mapSource) ListObjects(_ context.Context, _, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	var page []objectstore.ObjectVersion
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			page = append(page, objectstore.ObjectVersion{Key: k, Size: int64(len(v))})
		}
	}
	return fn(page)
}

// SnapshotRule: a copy has no versions, no marks.
func (m mapSource) SnapshotRule(context.Context, string) (objectstore.SnapshotRule, error) {
	return objectstore.SnapshotRule{Source: "a copy in memory"}, nil
}

func (m mapSource) OpenObject(_ context.Context, _, key, _ string) (io.ReadCloser, error) {
	data, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("%s: %w", key, objectstore.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func TestDrillRealSnapshots(t *testing.T) {
	for _, si := range standin.All() {
		t.Run(si.Type, func(t *testing.T) {
			began := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			w, err := si.Start(ctx, t, si.Region)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			s := made(t, ctx, si, w)
			compressions, damage := chains(si)
			for _, c := range compressions {
				t.Run(c.name, func(t *testing.T) {
					drillChain(t, ctx, s, c, damage, si.ManifestUploads)
				})
			}
			t.Logf("%s (%s): %s", si.Type, w.What, time.Since(began).Round(time.Second))
		})
	}
}

// drillChain has the real sidecar write a chain with c's compression through s's stand-in, drills
// it through s's DataPlane and checks the restored keys and revision against what etcd held, and
// that the bucket is unchanged. manifests: the listing shows every snapshot with 0 bytes.
func drillChain(t *testing.T, ctx context.Context, s standIn, c compression, damage, manifests bool) {
	entry := "shoot--drill--" + c.name
	want, wantRev := backUp(t, ctx, s, entry, c.flags)
	before := framework.ListAll(t, ctx, s.store, bucket)

	var restored map[string]string
	results, err := drill.Drill(ctx, s.store, bucket, entry+"/", drill.Options{
		ScratchDir: t.TempDir(),
		Inspect: func(ctx context.Context, _ string, kv clientv3.KV) error {
			var err error
			restored, err = readKVs(ctx, kv)
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 {
		t.Fatalf("results %+v", results)
	}
	r := results[0]
	if r.Err != nil {
		t.Fatalf("the drill of etcd-backup-restore's snapshots failed: %v", r.Err)
	}
	if r.Revision != wantRev || !maps.Equal(restored, want) || r.Keys != int64(len(want)) {
		t.Errorf("restored %d keys at revision %d, want %d at %d; differ: %v", len(restored), r.Revision, len(want), wantRev, diff(restored, want))
	}
	if r.Deltas < 4 || !strings.HasSuffix(r.Full, c.suffix) || (!manifests && r.BytesRead != r.Size) {
		t.Errorf("result %+v: want at least 4 deltas, a full snapshot ending %q, every listed byte read", r, c.suffix)
	}
	if manifests && (r.Size != 0 || r.BytesRead == 0) {
		t.Errorf("result %+v: want the snapshots listed as manifests of 0 bytes, and read whole", r)
	}
	if after := framework.ListAll(t, ctx, s.store, bucket); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the drill changed the bucket:\nbefore %v\nafter  %v", before, after)
	}
	t.Logf("%s: restored %s and %d deltas to revision %d, %d keys, %d bytes read in %s", c.name, r.Full, r.Deltas, r.Revision, r.Keys, r.BytesRead, r.Duration)
	if damage && (c.suffix == "" || c.suffix == ".gz") {
		damaged(t, ctx, s.store, entry, c.suffix)
	}
}

// damaged drills copies of the entry's snapshots, each damaged one way, and checks each reason.
func damaged(t *testing.T, ctx context.Context, store objectstore.DataPlane, entry, suffix string) {
	orig := mapSource{}
	var names []string // the chain: full first, then deltas in order
	col := drill.NewCollector(entry+"/", objectstore.SnapshotRule{})
	if err := store.ListObjects(ctx, bucket, entry+"/", func(page []objectstore.ObjectVersion) error {
		col.Add(page)
		for _, o := range page {
			data, err := objectstore.ReadObject(ctx, store, bucket, o.Key)
			if err != nil {
				return err
			}
			orig[o.Key] = data
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	chains, err := col.Chains(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ch := chains[0]
	names = append(names, ch.Full.Key)
	for _, d := range ch.Deltas {
		names = append(names, d.Key)
	}
	mid := names[2]
	flipAt := func(data []byte) int {
		if suffix == ".gz" {
			return len(data) - 8 // the gzip trailer's CRC-32 of the content
		}
		return len(data) / 2
	}
	rename := func(o mapSource, from, to string) { o[to] = o[from]; delete(o, from) }
	cases := []struct {
		name   string
		change func(o mapSource)
		want   drill.Reason
	}{
		{"a byte flipped in the full snapshot", func(o mapSource) { o[names[0]] = flip(o[names[0]], flipAt(o[names[0]])) }, drill.ReasonHashMismatch},
		{"a byte flipped in a delta", func(o mapSource) { o[mid] = flip(o[mid], flipAt(o[mid])) }, drill.ReasonHashMismatch},
		{"a truncated full snapshot", func(o mapSource) { o[names[0]] = o[names[0]][:len(o[names[0]])-100] }, drill.ReasonUndecodable},
		{"a missing middle delta", func(o mapSource) { delete(o, mid) }, drill.ReasonChainBroken},
		{"an overlapping delta from a second writer", func(o mapSource) {
			s, _ := drill.ParseKey(entry+"/", mid)
			o[fmt.Sprintf("%s/etcd-main/v2/Incr-%08d-%08d-%d%s", entry, s.StartRevision-1, s.LastRevision, s.CreatedOn.Unix()+1, suffix)] = o[mid]
		}, drill.ReasonChainBroken},
		{"a wrong compression suffix", func(o mapSource) {
			if suffix == "" {
				rename(o, mid, mid+".gz")
			} else {
				rename(o, mid, strings.TrimSuffix(mid, suffix))
			}
		}, drill.ReasonUndecodable},
		{"an empty delta", func(o mapSource) { o[mid] = nil }, drill.ReasonUndecodable},
		{"an empty full snapshot", func(o mapSource) { o[names[0]] = []byte{} }, drill.ReasonUndecodable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := maps.Clone(orig)
			c.change(o)
			results, err := drill.Drill(ctx, o, bucket, entry+"/", drill.Options{ScratchDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if got := drill.ReasonOf(results[0].Err); got != c.want {
				t.Fatalf("reason %q, want %q: %v", got, c.want, results[0].Err)
			}
			t.Logf("%v", results[0].Err)
		})
	}
}

func flip(data []byte, at int) []byte {
	out := bytes.Clone(data)
	out[at] ^= 0x01
	return out
}

// backUp runs etcd with the real etcd-backup-restore beside it, writes keys before its first full
// snapshot and in rounds after it (new keys, overwrites, deletes), waits until a snapshot covers
// each round, stops the sidecar and returns what etcd holds and its revision.
func backUp(t *testing.T, ctx context.Context, s standIn, entry string, flags []string) (map[string]string, int64) {
	t.Helper()
	db := stack.StartEtcd(t, filepath.Join(t.TempDir(), "etcd"))
	defer db.Stop()
	for i := range 20 {
		db.Put(t, fmt.Sprintf("/registry/pods/ns/p%02d", i), strings.Repeat("x", 100*i))
	}
	mount := t.TempDir()
	stack.MountSecret(t, mount, s.secret)
	consumer := s.consumer
	consumer.Flags = append(slices.Clone(consumer.Flags), flags...)
	sidecar := consumer.Snapshotter(t, db, mount, s.bucket, entry)
	defer sidecar.Stop()
	prefix := entry + "/etcd-main/"
	var rev int64
	for round := range 5 {
		if round > 0 {
			for i := range 3 {
				db.Put(t, fmt.Sprintf("/registry/pods/ns/p%02d", round*3+i), fmt.Sprintf("changed in round %d", round))
				db.Put(t, fmt.Sprintf("/registry/leases/r%d-%d", round, i), "new")
			}
			deleteKey(t, db, fmt.Sprintf("/registry/pods/ns/p%02d", 19-round))
		}
		rev = db.PutRev(t, fmt.Sprintf("/registry/rounds/%d", round), "done")
		framework.WaitCovered(t, ctx, s.store, sidecar, s.bucket, prefix, rev)
	}
	sidecar.Stop()
	kvs, got := rangeAll(t, db)
	if got != rev {
		t.Fatalf("etcd stands at %d after the last write at %d", got, rev)
	}
	return kvs, rev
}

func readKVs(ctx context.Context, kv clientv3.KV) (map[string]string, error) {
	resp, err := kv.Get(ctx, "\x00", clientv3.WithFromKey())
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range resp.Kvs {
		out[string(p.Key)] = string(p.Value)
	}
	return out, nil
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func deleteKey(t *testing.T, db *stack.Etcd, key string) {
	t.Helper()
	var out map[string]any
	db.Call(t, "/v3/kv/deleterange", map[string]string{"key": b64(key)}, &out)
}

// rangeAll is every key and value etcd holds, and its revision.
func rangeAll(t *testing.T, db *stack.Etcd) (map[string]string, int64) {
	t.Helper()
	var out struct {
		Header struct {
			Revision int64 `json:"revision,string"`
		} `json:"header"`
		KVs []struct{ Key, Value string } `json:"kvs"`
	}
	db.Call(t, "/v3/kv/range", map[string]string{"key": b64("\x00"), "range_end": b64("\x00")}, &out)
	kvs := map[string]string{}
	for _, kv := range out.KVs {
		k, _ := base64.StdEncoding.DecodeString(kv.Key)
		v, _ := base64.StdEncoding.DecodeString(kv.Value)
		kvs[string(k)] = string(v)
	}
	return kvs, out.Header.Revision
}

func diff(got, want map[string]string) []string {
	var d []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			d = append(d, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			d = append(d, "+"+k)
		}
	}
	return d
}
