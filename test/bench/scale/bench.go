// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/bench/benchutil"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// hit is one request the proxy answered.
type hit struct {
	at    time.Time
	write bool
}

type bench struct {
	c         config
	work      string
	env       *envtest.Environment
	k8s       client.Client
	own       ownRequests // the benchmark's own requests to kube-apiserver
	apiserver *apiServer  // envtest's kube-apiserver as its admin sees it (/metrics, /debug/pprof)
	minio     *awsstack.MinIO
	proxy     *stack.Proxy
	direct    conformance.Stores // MinIO without the proxy: seeding and checks, not counted
	repMu     sync.Mutex         // guards reps' killed and last (the CPU sampler takes snapshots too)
	reps      []*replica
	started   int // extension processes started so far (names their folders)
	// n is how many entries exist: --entries, plus the kept ones phase 3 adds if there are too few.
	n int

	mu   sync.Mutex
	hits []hit
	log  *os.File // the proxy's log: one line per request to MinIO
	// peakRSS is each extension process's highest VmHWM seen, kept after it is killed.
	peakRSS map[string]float64
	// deleted counts, while recordDeletes is set, how often each key (and version) was sent in
	// a batch deletion through the proxy.
	recordDeletes bool
	deleted       map[string]int
	deleteBatches int
	// cutBatches counts batch deletions the proxy could not answer with MinIO's reply (a 502: the
	// client went away, e.g. killed, while MinIO may still have done them).
	cutBatches int
}

func (b *bench) record(r *http.Request, status int) {
	b.mu.Lock()
	now := time.Now()
	b.hits = append(b.hits, hit{at: now, write: r.Method != http.MethodGet && r.Method != http.MethodHead})
	if b.recordDeletes && status == http.StatusBadGateway && r.Method == http.MethodPost && r.URL.Query().Has("delete") {
		b.cutBatches++
	}
	if b.log != nil {
		fmt.Fprintf(b.log, "%s %d %-6s %s?%s\n", now.UTC().Format("15:04:05.000"), status, r.Method, r.URL.Path, r.URL.RawQuery)
	}
	b.mu.Unlock()
}

// since returns the proxy's hits from i on.
func (b *bench) since(i int) []hit {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.hits[i:])
}

func (b *bench) mark() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.hits)
}

var operationReconcile = map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile}

func entryName(i int) string {
	return fmt.Sprintf("shoot--bench--s%05d--2b8f0c1e-5d9a-4c1e-9f3b-%012d", i, i)
}

func shootNamespace(i int) string { return fmt.Sprintf("shoot--bench--s%05d", i) }

func (b *bench) secretData() map[string][]byte {
	return map[string][]byte{
		"accessKeyID": []byte(b.minio.AccessKey), "secretAccessKey": []byte(b.minio.SecretKey),
		"endpoint": []byte(b.proxy.URL), "s3ForcePathStyle": []byte("true"),
	}
}

// parallel runs fn(i) for i in [0, n) on the benchmark's workers.
func (b *bench) parallel(n int, fn func(int) error) error {
	return parallel(b.c.workers, n, fn)
}

// parallel runs fn(i) for i in [0, n) on workers goroutines and returns the first error.
func parallel(workers, n int, fn func(int) error) error {
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range workers {
		wg.Go(func() {
			for i := range work {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return first
}

const bucketName = "bench-scale"

func succeeded(obj extensionsv1alpha1.Object) bool {
	op := obj.GetExtensionStatus().GetLastOperation()
	return op != nil && op.State == gardencorev1beta1.LastOperationStateSucceeded
}

// countEntries returns a poll that Lists the entries and counts those for which ok holds, of
// the first total.
func (b *bench) countEntries(ctx context.Context, total int, ok func(*extensionsv1alpha1.BackupEntry) bool) func() (int, int, error) {
	return func() (int, int, error) {
		list := &extensionsv1alpha1.BackupEntryList{}
		if err := b.k8s.List(ctx, list); err != nil {
			return 0, total, err
		}
		done := 0
		for i := range list.Items {
			if ok(&list.Items[i]) {
				done++
			}
		}
		return min(done, total), total, nil
	}
}

// waitFor polls every second until done == total.
func (b *bench) waitFor(ctx context.Context, what string, poll func() (done, total int, err error)) error {
	deadline := time.Now().Add(b.c.timeout)
	last := time.Now()
	for {
		done, total, err := poll()
		if err != nil {
			return err
		}
		if done == total {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d of %d after %s", what, done, total, b.c.timeout)
		}
		if time.Since(last) >= 10*time.Second {
			progress("  %s: %d of %d", what, done, total)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// snapshot is what the benchmark samples from /proc, the extensions' metrics and kube-apiserver's.
type snapshot struct {
	at        time.Time
	procs     map[string]benchutil.Proc
	metrics   benchutil.MetricSet // all replicas' series (a killed one's last scrape)
	apiserver benchutil.MetricSet
	own       map[string]float64 // the benchmark's own requests so far
}

// take reads every child process of the benchmark (kube-apiserver, etcd, minio, the extensions)
// and the benchmark itself, and scrapes the extensions and kube-apiserver.
func (b *bench) take(ctx context.Context) (snapshot, error) {
	s := snapshot{at: time.Now(), procs: map[string]benchutil.Proc{}, own: b.own.counts()}
	kids := benchutil.Children(os.Getpid())
	kids["benchmark (client, proxy)"] = os.Getpid()
	b.repMu.Lock()
	defer b.repMu.Unlock()
	mine := map[int]bool{} // the extensions: read by pid below, as Children keeps one per name
	for _, r := range b.reps {
		mine[r.ext.Pid()] = true
	}
	for name, pid := range kids {
		if mine[pid] {
			continue
		}
		if p, err := benchutil.ReadProc(pid); err == nil {
			s.procs[name] = p
		}
	}
	for _, r := range b.reps {
		if r.killed {
			continue
		}
		if p, err := benchutil.ReadProc(r.ext.Pid()); err == nil {
			s.procs[r.name] = p
			b.notePeak(r.name, p.PeakRSSMiB)
		}
	}
	for _, r := range b.reps {
		if !r.killed {
			m, err := benchutil.Scrape(ctx, r.ext.MetricsURL)
			if err != nil {
				return s, err
			}
			r.last = m
		}
		s.metrics = append(s.metrics, r.last...)
	}
	var err error
	s.apiserver, err = b.apiserver.metrics(ctx)
	return s, err
}

func (b *bench) notePeak(name string, mib float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.peakRSS[name] = max(b.peakRSS[name], mib)
}

// sampleCPU samples the processes' CPU every 2 s until the returned func is called, which returns
// for each process the highest share of one core it used in a sample.
func (b *bench) sampleCPU(ctx context.Context) func() map[string]float64 {
	busiest := map[string]float64{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		prev, _ := b.take(ctx)
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Second):
			}
			cur, err := b.take(ctx)
			if err != nil {
				continue
			}
			dt := cur.at.Sub(prev.at).Seconds()
			for name, p := range cur.procs {
				if q, ok := prev.procs[name]; ok {
					busiest[name] = max(busiest[name], (p.CPUSeconds-q.CPUSeconds)/dt)
				}
			}
			prev = cur
		}
	})
	return func() map[string]float64 {
		close(stop)
		wg.Wait()
		return busiest
	}
}
