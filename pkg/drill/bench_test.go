// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// dirSource serves objects from files, streaming, so that the benchmark's own store holds
// nothing in memory.
type dirSource struct{ root string }

func (d dirSource) ListObjects(_ context.Context, _, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	var page []objectstore.ObjectVersion
	err := filepath.WalkDir(d.root, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		key, _ := filepath.Rel(d.root, path)
		if strings.HasPrefix(key, prefix) {
			page = append(page, objectstore.ObjectVersion{Key: key, Size: info.Size()})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return fn(page)
}

func (d dirSource) OpenObject(_ context.Context, _, key, _ string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(d.root, key))
}

// SnapshotRule: files, as the local snapstore lists them.
func (d dirSource) SnapshotRule(context.Context, string) (objectstore.SnapshotRule, error) {
	return objectstore.SnapshotRule{}, nil
}

func (d dirSource) put(t testing.TB, name string, data []byte) {
	t.Helper()
	path := filepath.Join(d.root, dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// putFull streams etcd's snapshot into a full snapshot's file, never whole in memory.
func (d dirSource) putFull(t testing.TB, etcd *sourceEtcd) {
	t.Helper()
	rev := etcd.rev()
	rc, err := etcd.client.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	path := filepath.Join(d.root, dir, fmt.Sprintf("Full-%08d-%08d-%d", 0, rev, etcd.next()))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, rc); err != nil {
		t.Fatal(err)
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// BenchmarkDrill drills a full snapshot of DRILL_BENCH_MB MiB (default 64) and DRILL_BENCH_DELTAS
// deltas (default 100) served from files, and reports the drill's throughput, the raw read rate
// of the same objects, the process's peak RSS during the
// drill (VmHWM after resetting it through /proc/self/clear_refs, page cache of the mapped
// database included), and the heap and anonymous memory the drill added at its peak. One
// iteration is enough:
//
//	go test -run '^$' -bench Drill -benchtime 1x ./pkg/drill/
func BenchmarkDrill(b *testing.B) {
	mib, deltas := envInt("DRILL_BENCH_MB", 64), envInt("DRILL_BENCH_DELTAS", 100)
	src := dirSource{root: b.TempDir()}
	etcd := newSourceEtcd(b)
	// Values of 4 KiB, written 100 to a transaction: Kubernetes objects' order of size.
	value := strings.Repeat("v", 4096)
	keys := mib * 256
	for i := 0; i < keys; i += 100 {
		ops := make([]clientv3.Op, 0, 100)
		for j := i; j < min(i+100, keys); j++ {
			ops = append(ops, clientv3.OpPut(fmt.Sprintf("/registry/big/%08d", j), value))
		}
		if _, err := etcd.client.Txn(context.Background()).Then(ops...).Commit(); err != nil {
			b.Fatal(err)
		}
	}
	src.putFull(b, etcd)
	for d := range deltas {
		from := etcd.rev() + 1
		etcd.put(fmt.Sprintf("/registry/small/%06d", d), "x")
		etcd.put(fmt.Sprintf("/registry/big/%08d", d%keys), "overwritten")
		name, data := etcd.delta(from, etcd.rev(), ".gz")
		src.put(b, name, data)
	}
	want := etcd.rev()
	ctx := context.Background()
	etcd.stop() // what the source etcd holds in memory is not the drill's
	runtime.GC()
	debug.FreeOSMemory()

	var total int64
	start := time.Now()
	if err := src.ListObjects(ctx, bucket, entry, func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			rc, err := src.OpenObject(ctx, bucket, o.Key, "")
			if err != nil {
				return err
			}
			n, err := io.Copy(io.Discard, rc)
			rc.Close()
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	raw := float64(total) / time.Since(start).Seconds() / (1 << 20)

	b.ResetTimer()
	for range b.N {
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		baseAnon := procStatus("RssAnon:")
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		stop, peakHeap, peakAnon := sampleMemory()
		results, err := Drill(ctx, src, bucket, entry, Options{ScratchDir: b.TempDir()})
		stop()
		if err != nil || results[0].Err != nil || results[0].Revision != want {
			b.Fatalf("drill: %v %+v", err, results)
		}
		r := results[0]
		b.ReportMetric(float64(r.BytesRead)/r.Duration.Seconds()/(1<<20), "drill-MiB/s")
		b.ReportMetric(raw, "raw-MiB/s")
		// Above what the process held before the drill (the benchmark's source etcd, stopped,
		// keeps part of its raft log reachable).
		b.ReportMetric(float64(*peakHeap-min(*peakHeap, base.HeapAlloc))/(1<<20), "drill-heap-MiB")
		b.ReportMetric(float64(*peakAnon-min(*peakAnon, baseAnon))/(1<<10), "drill-anon-RSS-MiB")
		b.ReportMetric(float64(procStatus("VmHWM:"))/(1<<10), "peak-RSS-MiB")
		b.ReportMetric(float64(r.BytesRead)/(1<<20), "read-MiB")
	}
}

// sampleMemory samples the Go heap and the anonymous resident memory (what is not the page
// cache of mapped files) every 10 ms until stop is called.
func sampleMemory() (stop func(), peakHeap *uint64, peakAnonKiB *int64) {
	peakHeap, peakAnonKiB = new(uint64), new(int64)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			*peakHeap = max(*peakHeap, s[0].Value.Uint64())
			*peakAnonKiB = max(*peakAnonKiB, procStatus("RssAnon:"))
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); wg.Wait() }, peakHeap, peakAnonKiB
}

// procStatus is a field of /proc/self/status in KiB.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
