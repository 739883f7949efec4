// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

const (
	bucket = "backups"
	entry  = "shoot--p--s--uid/"
	dir    = entry + "etcd-main/v2/"
)

// chainFixture is a source etcd's snapshots: a full snapshot and three deltas with puts,
// overwrites and deletes, as objects (name -> content), and what the etcd held at the end.
type chainFixture struct {
	names   []string // full first, then the deltas in order
	objects map[string][]byte
	want    map[string]string
	lastRev int64
}

func newChain(t *testing.T, suffix string) chainFixture {
	t.Helper()
	src := newSourceEtcd(t)
	for i := range 20 {
		src.put(fmt.Sprintf("/registry/pods/ns/p%02d", i), strings.Repeat("v", i*100))
	}
	f := chainFixture{objects: map[string][]byte{}}
	add := func(name string, data []byte) {
		f.names = append(f.names, name)
		f.objects[name] = data
	}
	add(src.full(suffix))
	prev := src.rev()
	for d := range 3 {
		for i := range 5 {
			src.put(fmt.Sprintf("/registry/pods/ns/p%02d", i+d), fmt.Sprintf("changed in delta %d", d))
		}
		src.del(fmt.Sprintf("/registry/pods/ns/p%02d", 10+d))
		if _, err := src.client.Txn(context.Background()).Then(
			clientv3.OpPut(fmt.Sprintf("/registry/leases/l%d", d), "a"),
			clientv3.OpPut(fmt.Sprintf("/registry/leases/m%d", d), "b"),
			clientv3.OpDelete(fmt.Sprintf("/registry/pods/ns/p%02d", 15+d)),
		).Commit(); err != nil {
			t.Fatal(err)
		}
		now := src.rev()
		add(src.delta(prev+1, now, suffix))
		prev = now
	}
	f.want, f.lastRev = src.kvs(), prev
	return f
}

// store holds objects under dir.
func store(t *testing.T, objects map[string][]byte) *memstore.Store {
	t.Helper()
	s := memstore.New(1000)
	ctx := context.Background()
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: bucket}); err != nil {
		t.Fatal(err)
	}
	for name, data := range objects {
		if err := s.PutObject(ctx, bucket, dir+name, data); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// listing is every object version in the bucket, to show a drill wrote nothing.
func listing(t *testing.T, s *memstore.Store) []objectstore.ObjectVersion {
	t.Helper()
	var all []objectstore.ObjectVersion
	if err := s.ListObjects(context.Background(), bucket, "", func(p []objectstore.ObjectVersion) error {
		all = append(all, p...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return all
}

// drill drills the store and checks what every drill must hold, success or not: one result for
// etcd-main, nothing written to the store, the scratch directory empty again.
func drill(t *testing.T, s *memstore.Store, opts Options) (Result, map[string]string) {
	t.Helper()
	before := listing(t, s)
	if opts.ScratchDir == "" {
		opts.ScratchDir = t.TempDir()
	}
	var restored map[string]string
	opts.Inspect = func(_ context.Context, _ string, kv clientv3.KV) error {
		restored = readKVs(t, kv)
		return nil
	}
	results, err := Drill(context.Background(), memSource{s}, bucket, entry, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Etcd != "etcd-main" {
		t.Fatalf("results %+v", results)
	}
	if after := listing(t, s); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the drill changed the store:\nbefore %v\nafter  %v", before, after)
	}
	left, err := os.ReadDir(opts.ScratchDir)
	if err != nil || len(left) != 0 {
		t.Errorf("scratch directory not cleaned: %v %v", left, err)
	}
	return results[0], restored
}

func TestDrillRestoresChain(t *testing.T) {
	for _, suffix := range []string{"", ".gz", ".zlib", ".Z"} {
		t.Run("compression "+suffix, func(t *testing.T) {
			f := newChain(t, suffix)
			r, restored := drill(t, store(t, f.objects), Options{})
			if r.Err != nil {
				t.Fatalf("drill failed: %v", r.Err)
			}
			if r.Revision != f.lastRev || r.Deltas != 3 || r.Full != dir+f.names[0] || r.Keys != int64(len(f.want)) {
				t.Errorf("result %+v, want revision %d, 3 deltas, %d keys", r, f.lastRev, len(f.want))
			}
			if !maps.Equal(restored, f.want) {
				t.Errorf("restored keys differ:\n got %v\nwant %v", restored, f.want)
			}
			if r.BytesRead != r.Size || r.Size == 0 {
				t.Errorf("read %d bytes of a %d-byte chain", r.BytesRead, r.Size)
			}
		})
	}
}

// etcd-backup-restore names a full snapshot by the revision it read just before taking it; the
// database may be ahead of that, and the first delta then repeats revisions the full snapshot
// holds (snapshotter.go:337-348, restorer.go:497-529). The drill skips those events, as the
// restorer does.
func TestDrillFullSnapshotAheadOfItsName(t *testing.T) {
	src := newSourceEtcd(t)
	for i := range 5 {
		src.put(fmt.Sprintf("k%d", i), "v")
	}
	named := src.rev()
	src.put("k5", "written between the revision read and the snapshot")
	src.put("k6", "too")
	fullName, fullData := src.full("")
	fullName = strings.Replace(fullName, fmt.Sprintf("-%08d-", src.rev()), fmt.Sprintf("-%08d-", named), 1)
	src.put("k7", "after")
	src.del("k0")
	deltaName, deltaData := src.delta(named+1, src.rev(), ".gz")

	r, restored := drill(t, store(t, map[string][]byte{fullName: fullData, deltaName: deltaData}), Options{})
	if r.Err != nil {
		t.Fatalf("drill failed: %v", r.Err)
	}
	if want := src.kvs(); !maps.Equal(restored, want) || r.Revision != src.rev() {
		t.Errorf("restored %v at %d, want %v at %d", restored, r.Revision, want, src.rev())
	}
}

func TestDrillFullSnapshotAlone(t *testing.T) {
	src := newSourceEtcd(t)
	src.put("a", "1")
	src.put("b", "2")
	name, data := src.full(".gz")
	r, restored := drill(t, store(t, map[string][]byte{name: data}), Options{})
	if r.Err != nil || r.Revision != src.rev() || r.Deltas != 0 || !maps.Equal(restored, src.kvs()) {
		t.Fatalf("result %+v, restored %v", r, restored)
	}
}

func flip(data []byte, at int) []byte {
	out := append([]byte(nil), data...)
	out[at] ^= 0x01
	return out
}

// withHash is data with its SHA-256 appended.
func withHash(data []byte) []byte {
	sum := sha256.Sum256(data)
	return append(append([]byte(nil), data...), sum[:]...)
}

func TestDrillFindings(t *testing.T) {
	plain := newChain(t, "")
	gz := newChain(t, ".gz")
	tests := []struct {
		name   string
		chain  chainFixture
		change func(objects map[string][]byte, names []string)
		opts   Options
		want   Reason
	}{
		{"a byte flipped in the full snapshot", plain, func(o map[string][]byte, n []string) { o[n[0]] = flip(o[n[0]], 4096+100) }, Options{}, ReasonHashMismatch},
		{"a byte flipped in a delta", plain, func(o map[string][]byte, n []string) { o[n[2]] = flip(o[n[2]], 40) }, Options{}, ReasonHashMismatch},
		{"a byte flipped in a delta's hash", plain, func(o map[string][]byte, n []string) { o[n[2]] = flip(o[n[2]], len(o[n[2]])-1) }, Options{}, ReasonHashMismatch},
		{"a truncated full snapshot", plain, func(o map[string][]byte, n []string) { o[n[0]] = o[n[0]][:len(o[n[0]])-1000] }, Options{}, ReasonUndecodable},
		{"a truncated compressed delta", gz, func(o map[string][]byte, n []string) { o[n[3]] = o[n[3]][:len(o[n[3]])/2] }, Options{}, ReasonUndecodable},
		{"a byte flipped in a compressed delta's checksum", gz, func(o map[string][]byte, n []string) { o[n[2]] = flip(o[n[2]], len(o[n[2]])-8) }, Options{}, ReasonHashMismatch},
		{"a compressed delta named uncompressed", gz, func(o map[string][]byte, n []string) {
			o[strings.TrimSuffix(n[2], ".gz")] = o[n[2]]
			delete(o, n[2])
		}, Options{}, ReasonUndecodable},
		{"a missing middle delta", plain, func(o map[string][]byte, n []string) { delete(o, n[2]) }, Options{}, ReasonChainBroken},
		{"an overlapping delta from a second writer", plain, func(o map[string][]byte, n []string) {
			s, _ := ParseKey("", "e/v2/"+n[2])
			o[fmt.Sprintf("Incr-%08d-%08d-1800000000", s.StartRevision-1, s.LastRevision+1)] = o[n[2]]
		}, Options{}, ReasonChainBroken},
		{"a wrong compression suffix", plain, func(o map[string][]byte, n []string) {
			o[n[1]+".gz"] = o[n[1]]
			delete(o, n[1])
		}, Options{}, ReasonUndecodable},
		{"compressed data named uncompressed", gz, func(o map[string][]byte, n []string) {
			o[strings.TrimSuffix(n[0], ".gz")] = o[n[0]]
			delete(o, n[0])
		}, Options{}, ReasonUndecodable},
		{"an empty full snapshot", plain, func(o map[string][]byte, n []string) { o[n[0]] = nil }, Options{}, ReasonUndecodable},
		{"an empty compressed delta", gz, func(o map[string][]byte, n []string) { o[n[1]] = nil }, Options{}, ReasonUndecodable},
		{"a delta whose events end before its name", plain, func(o map[string][]byte, n []string) {
			s, _ := ParseKey("", "e/v2/"+n[3])
			o[fmt.Sprintf("Incr-%08d-%08d-1800000000", s.StartRevision, s.LastRevision+1)] = o[n[3]]
			delete(o, n[3])
		}, Options{}, ReasonChainBroken},
		{"a delta that is not JSON", plain, func(o map[string][]byte, n []string) { o[n[1]] = withHash([]byte("not json")) }, Options{}, ReasonUndecodable},
		{"a database etcd cannot open, hash intact", plain, func(o map[string][]byte, n []string) {
			o[n[0]] = withHash([]byte(strings.Repeat("not a bolt database", 512*4)[:512*4]))
		}, Options{}, ReasonRestoreFailed},
		{"deltas without their full snapshot", plain, func(o map[string][]byte, n []string) { delete(o, n[0]) }, Options{}, ReasonNoFullSnapshot},
		{"a chain over the byte budget", plain, func(map[string][]byte, []string) {}, Options{MaxBytes: 1024}, ReasonTooLarge},
		{"a chain over the scratch budget", gz, func(map[string][]byte, []string) {}, Options{MaxScratchBytes: 512}, ReasonTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objects := maps.Clone(tt.chain.objects)
			tt.change(objects, tt.chain.names)
			r, _ := drill(t, store(t, objects), tt.opts)
			if got := ReasonOf(r.Err); got != tt.want {
				t.Fatalf("reason %q, want %q: %v", got, tt.want, r.Err)
			}
			if !errors.Is(r.Err, sentinels[tt.want]) {
				t.Errorf("errors.Is(%v, %v) is false", r.Err, sentinels[tt.want])
			}
			if r.Revision != 0 || r.Keys != 0 {
				t.Errorf("a failed drill reports revision %d and %d keys", r.Revision, r.Keys)
			}
			t.Logf("%v", r.Err)
		})
	}
}

// faultySource fails reading objects as a store does; such a failure says nothing about the
// backup and is no finding.
type faultySource struct {
	memSource

	err error
}

func (f faultySource) OpenObject(_ context.Context, _, key, _ string) (io.ReadCloser, error) {
	return nil, fmt.Errorf("get %s: %w", key, f.err)
}

func TestDrillStoreErrorsAreNoFindings(t *testing.T) {
	f := newChain(t, ".gz")
	s := store(t, f.objects)
	scratch := t.TempDir()
	results, err := Drill(context.Background(), faultySource{memSource{s}, objectstore.ErrThrottled}, bucket, entry, Options{ScratchDir: scratch})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if ReasonOf(r.Err) != "" || !errors.Is(r.Err, objectstore.ErrThrottled) {
		t.Fatalf("a throttled read gave %v", r.Err)
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("scratch directory not cleaned: %v", left)
	}
}

// A customer key the store refuses is a finding, KeyRefused: the backup cannot be restored with
// the entry's secret (etcd-backup-restore's), though its bytes were never read, so it is not
// called damaged or undecodable.
func TestDrillKeyRefusedIsAFinding(t *testing.T) {
	f := newChain(t, ".gz")
	s := store(t, f.objects)
	scratch := t.TempDir()
	refused := fmt.Errorf("%w: the store refused the secret's key", objectstore.ErrKeyRefused)
	results, err := Drill(context.Background(), faultySource{memSource{s}, refused}, bucket, entry, Options{ScratchDir: scratch})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if ReasonOf(r.Err) != ReasonKeyRefused || !errors.Is(r.Err, ErrKeyRefused) || !errors.Is(r.Err, objectstore.ErrKeyRefused) {
		t.Fatalf("a refused customer key gave %v (reason %q); want %s wrapping the store's error", r.Err, ReasonOf(r.Err), ReasonKeyRefused)
	}
	var de *Error
	if !errors.As(r.Err, &de) || de.Key == "" {
		t.Errorf("the finding names no object: %+v", de)
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("scratch directory not cleaned: %v", left)
	}
}
