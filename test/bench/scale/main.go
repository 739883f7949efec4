// Command scale measures the aws binary on a seed with many BackupEntries on one bucket: the real
// binary runs as a process against envtest (kube-apiserver + etcd) and MinIO behind a counting
// proxy. Phases:
//
//  1. --entries entries created at once: time until all are Succeeded (polled with a List), the
//     extension's peak RSS, kube-apiserver requests (controller-runtime's rest_client_requests_total)
//     and cloud calls (the extension's gardener_backup_cloud_requests_total, and the proxy's own
//     count) per entry, and the CPU each process spent (from /proc/<pid>/stat).
//  2. a resync of the unchanged entries and their bucket as gardenlet triggers it (the
//     gardener.cloud/operation=reconcile annotation on all of them at once): cloud writes and reads
//     per entry and how the cloud calls spread over time (5 s buckets of the proxy's timestamps);
//     then the extension's own periodic work per entry (the inventory, --inventory-interval) over
//     one period, after a restart of the binary with that interval.
//  3. --delete-entries of the entries, each given --objects objects first, deleted at once: time to
//     all gone and the slowest entry against the median.
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/bench/benchutil"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const bucketConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`

type config struct {
	entries, workers       int
	deleteEntries, objects int
	resync                 bool
	inventoryInterval      time.Duration
	timeout                time.Duration
	binary                 string
	extFlags               string
	work                   string
}

func main() {
	var c config
	flag.IntVar(&c.entries, "entries", 1000, "BackupEntries on the one bucket, created at once")
	flag.IntVar(&c.workers, "workers", 32, "concurrent creates/deletes of the benchmark's own client")
	flag.BoolVar(&c.resync, "resync", true, "phase 2: a resync of the unchanged entries, then one inventory period")
	flag.DurationVar(&c.inventoryInterval, "inventory-interval", 60*time.Second, "phase 2: the binary's --entry-inventory-interval for the periodic-work window (0: skip that window)")
	flag.IntVar(&c.deleteEntries, "delete-entries", 0, "phase 3: entries deleted at once (0: skip)")
	flag.IntVar(&c.objects, "objects", 1000, "phase 3: objects written under each deleted entry's prefix first")
	flag.DurationVar(&c.timeout, "timeout", 30*time.Minute, "give up waiting for a phase after this (phase 1 then reports what it has)")
	flag.StringVar(&c.binary, "binary", "", "the aws extension binary (default: built into .tmp/bench-scale)")
	flag.StringVar(&c.extFlags, "extension-flags", "", "extra flags for the binary, space separated (e.g. \"--max-concurrent-reconciles 20\")")
	flag.StringVar(&c.work, "work", ".tmp/bench-scale", "folder (below the repository root) for the binary and the extension's logs; emptied first")
	flag.Parse()
	if c.entries < 1 || c.workers < 1 || c.deleteEntries < 0 || c.deleteEntries > c.entries || c.objects < 1 {
		fmt.Fprintln(os.Stderr, "need --entries >= 1, --workers >= 1, 0 <= --delete-entries <= --entries, --objects >= 1")
		os.Exit(2)
	}
	ctrllog.SetLogger(logr.Discard())
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale failed:", err)
		os.Exit(1)
	}
}

var started = time.Now()

func progress(format string, args ...any) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(started).Seconds(), fmt.Sprintf(format, args...))
}

// hit is one request the proxy answered.
type hit struct {
	at    time.Time
	write bool
}

type bench struct {
	c     config
	work  string
	env   *envtest.Environment
	k8s   client.Client
	minio *stack.MinIO
	proxy *stack.Proxy
	ext   *stack.Extension
	extN  int

	mu   sync.Mutex
	hits []hit
	log  *os.File // the proxy's log: one line per request to MinIO
}

func (b *bench) record(r *http.Request, status int) {
	b.mu.Lock()
	now := time.Now()
	b.hits = append(b.hits, hit{at: now, write: r.Method != http.MethodGet && r.Method != http.MethodHead})
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

func run(c config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	root, err := stack.RepoRoot()
	if err != nil {
		return err
	}
	b := &bench{c: c, work: filepath.Join(root, c.work)}
	_ = os.RemoveAll(b.work)
	if err := os.MkdirAll(b.work, 0o755); err != nil {
		return err
	}
	progress("bench-scale: %d entries on one bucket; resync %v (inventory interval %s); deletion of %d entries × %d objects; machine: %d cores",
		c.entries, c.resync, c.inventoryInterval, c.deleteEntries, c.objects, goruntime.NumCPU())
	if b.c.binary == "" {
		progress("building the aws binary")
		if b.c.binary, err = stack.BuildBinary(b.work, "aws"); err != nil {
			return err
		}
	}
	if b.minio, err = stack.StartMinIO(ctx, stack.MinIOOptions{}); err != nil {
		return err
	}
	defer b.minio.Stop()
	env, cfg, err := stack.StartEnvtest()
	if err != nil {
		return err
	}
	b.env = env
	defer func() { _ = env.Stop() }()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 2000, 4000 // the benchmark's own client must not be the bound
	scheme, err := app.Scheme()
	if err != nil {
		return err
	}
	if b.k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if err := b.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}); err != nil {
		return err
	}
	if b.log, err = os.Create(filepath.Join(b.work, "proxy.log")); err != nil {
		return err
	}
	defer b.log.Close()
	if b.proxy, err = stack.StartProxy(b.minio.Endpoint, stack.ProxyOptions{OnRequest: b.record}); err != nil {
		return err
	}
	defer b.proxy.Close()
	if err := b.startExtension(ctx); err != nil {
		return err
	}
	defer func() { b.ext.Stop() }()
	progress("MinIO %s behind proxy %s; envtest %s; extension pid %d (log %s)", b.minio.Endpoint, b.proxy.URL, cfg.Host, b.ext.Pid(), b.ext.LogPath)

	if err := b.phase1(ctx); err != nil {
		return err
	}
	if c.resync {
		if err := b.phase2(ctx); err != nil {
			return err
		}
	}
	if c.deleteEntries > 0 {
		if err := b.phase3(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (b *bench) startExtension(ctx context.Context, flags ...string) error {
	b.extN++
	dir := filepath.Join(b.work, fmt.Sprintf("extension-%d", b.extN))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	flags = append(flags, strings.Fields(b.c.extFlags)...)
	var err error
	b.ext, err = stack.StartExtension(ctx, b.env, b.c.binary, dir, flags...)
	return err
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
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range b.c.workers {
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

// snapshot is what the benchmark samples from /proc and the extension's metrics.
type snapshot struct {
	at      time.Time
	procs   map[string]benchutil.Proc
	metrics benchutil.MetricSet
}

// take reads every child process of the benchmark (kube-apiserver, etcd, minio, the extension)
// and the benchmark itself, and scrapes the extension.
func (b *bench) take(ctx context.Context) (snapshot, error) {
	s := snapshot{at: time.Now(), procs: map[string]benchutil.Proc{}}
	kids := benchutil.Children(os.Getpid())
	kids["benchmark (client, proxy)"] = os.Getpid()
	for name, pid := range kids {
		if p, err := benchutil.ReadProc(pid); err == nil {
			if pid == b.ext.Pid() {
				name = "extension"
			}
			s.procs[name] = p
		}
	}
	var err error
	s.metrics, err = benchutil.Scrape(ctx, b.ext.MetricsURL)
	return s, err
}

func (b *bench) phase1(ctx context.Context) error {
	c := b.c
	ref := corev1.SecretReference{Namespace: "garden", Name: "bucket-" + bucketName}
	if err := b.k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}, Data: b.secretData()}); err != nil {
		return err
	}
	if err := b.k8s.Create(ctx, &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: bucketName, Annotations: operationReconcile},
		Spec: extensionsv1alpha1.BackupBucketSpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws", ProviderConfig: &runtime.RawExtension{Raw: []byte(bucketConfig)}},
			Region:      b.minio.Region, SecretRef: ref,
		},
	}); err != nil {
		return err
	}
	if err := b.waitFor(ctx, "bucket", func() (int, int, error) {
		bb := &extensionsv1alpha1.BackupBucket{}
		if err := b.k8s.Get(ctx, client.ObjectKey{Name: bucketName}, bb); err != nil {
			return 0, 1, err
		}
		if succeeded(bb) {
			return 1, 1, nil
		}
		return 0, 1, nil
	}); err != nil {
		return err
	}
	progress("bucket Succeeded; creating %d shoot namespaces, Clusters and entry secrets (as gardenlet has them before the entries)", c.entries)
	t := time.Now()
	data := b.secretData()
	if err := b.parallel(c.entries, func(i int) error {
		ns := shootNamespace(i)
		if err := b.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
		if err := b.k8s.Create(ctx, &extensionsv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: extensionsv1alpha1.ClusterSpec{
			CloudProfile: runtime.RawExtension{Raw: []byte(`{}`)},
			Seed:         &runtime.RawExtension{Raw: []byte(`{}`)},
			Shoot:        runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","spec":{"hibernation":{"enabled":false}},"status":{"isHibernated":false}}`)},
		}}); err != nil {
			return err
		}
		return b.k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "entry-" + entryName(i)}, Data: data})
	}); err != nil {
		return err
	}
	progress("  done in %s", time.Since(t).Round(time.Second))

	before, err := b.take(ctx)
	if err != nil {
		return err
	}
	mark := b.mark()
	stopSampler := b.sampleCPU(ctx)
	progress("phase 1: creating %d BackupEntries at once (%d client workers)", c.entries, c.workers)
	t0 := time.Now()
	if err := b.parallel(c.entries, func(i int) error {
		return b.k8s.Create(ctx, &extensionsv1alpha1.BackupEntry{
			ObjectMeta: metav1.ObjectMeta{Name: entryName(i), Annotations: operationReconcile},
			Spec: extensionsv1alpha1.BackupEntrySpec{
				DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws"},
				Region:      b.minio.Region, BucketName: bucketName,
				SecretRef: corev1.SecretReference{Namespace: "garden", Name: "entry-" + entryName(i)},
			},
		})
	}); err != nil {
		return err
	}
	created := time.Since(t0)
	progress("  created in %s; waiting for all Succeeded", created.Round(100*time.Millisecond))
	count := b.countEntries(ctx, func(be *extensionsv1alpha1.BackupEntry) bool { return succeeded(be) })
	waitErr := b.waitFor(ctx, "entries Succeeded", count)
	elapsed := time.Since(t0)
	if waitErr != nil && ctx.Err() != nil {
		return waitErr
	}
	busiest := stopSampler()
	after, err := b.take(ctx)
	if err != nil {
		return err
	}
	n := float64(c.entries)
	fmt.Printf("\n## Phase 1: %d BackupEntries created at once\n", c.entries)
	if waitErr != nil { // timed out: report what there is, per entry created
		done, _, _ := count()
		fmt.Printf("NOT all Succeeded: %d of %d after %.1f s (--timeout): %.2f entries/s; the figures below are per entry created\n", done, c.entries, elapsed.Seconds(), float64(done)/elapsed.Seconds())
	} else {
		fmt.Printf("all Succeeded %.1f s after the first create (creating took %.1f s): %.2f entries/s\n", elapsed.Seconds(), created.Seconds(), n/elapsed.Seconds())
	}
	ext := after.procs["extension"]
	fmt.Printf("extension RSS: peak (VmHWM) %.0f MiB, now (VmRSS) %.0f MiB\n", ext.PeakRSSMiB, ext.RSSMiB)
	printAPI(before.metrics, after.metrics, n)
	printCloud(before.metrics, after.metrics, b.since(mark), n)
	printCPU(before, after, busiest)
	return waitErr
}

// countEntries returns a poll that Lists the entries and counts those for which ok holds.
func (b *bench) countEntries(ctx context.Context, ok func(*extensionsv1alpha1.BackupEntry) bool) func() (int, int, error) {
	return func() (int, int, error) {
		list := &extensionsv1alpha1.BackupEntryList{}
		if err := b.k8s.List(ctx, list); err != nil {
			return 0, b.c.entries, err
		}
		done := 0
		for i := range list.Items {
			if ok(&list.Items[i]) {
				done++
			}
		}
		return done, b.c.entries, nil
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

func printAPI(before, after benchutil.MetricSet, n float64) {
	d := benchutil.Delta(before, after, "rest_client_requests_total", "method")
	total := 0.0
	for _, v := range d {
		total += v
	}
	fmt.Printf("kube-apiserver requests of the extension (rest_client_requests_total): %.0f, %.2f per entry;", total, total/n)
	for _, k := range slices.Sorted(maps.Keys(d)) {
		fmt.Printf(" %s %.2f", k, d[k]/n)
	}
	fmt.Println(" per entry")
}

func printCloud(before, after benchutil.MetricSet, hits []hit, n float64) {
	d := benchutil.Delta(before, after, "gardener_backup_cloud_requests_total", "operation")
	total := 0.0
	for _, v := range d {
		total += v
	}
	fmt.Printf("cloud calls (gardener_backup_cloud_requests_total): %.0f, %.2f per entry;", total, total/n)
	for _, k := range slices.Sorted(maps.Keys(d)) {
		fmt.Printf(" %s %.2f", k, d[k]/n)
	}
	w := 0
	for _, h := range hits {
		if h.write {
			w++
		}
	}
	fmt.Printf(" per entry\nthe proxy counted %d requests to MinIO (%.2f per entry), %d of them writes (%.2f per entry)\n", len(hits), float64(len(hits))/n, w, float64(w)/n)
}

func printCPU(before, after snapshot, busiest map[string]float64) {
	dt := after.at.Sub(before.at).Seconds()
	fmt.Printf("CPU over the phase's %.0f s (share of one core; 2 cores = 200%%), busiest 2 s sample:\n", dt)
	names := slices.Collect(maps.Keys(after.procs))
	sort.Slice(names, func(i, j int) bool {
		return after.procs[names[i]].CPUSeconds-before.procs[names[i]].CPUSeconds > after.procs[names[j]].CPUSeconds-before.procs[names[j]].CPUSeconds
	})
	for _, name := range names {
		cpu := after.procs[name].CPUSeconds - before.procs[name].CPUSeconds
		fmt.Printf("  %-26s %6.1f s  %4.0f%%  (busiest %3.0f%%)\n", name, cpu, 100*cpu/dt, 100*busiest[name])
	}
}

// histogram prints hits per 5 s bucket from t0.
func histogram(hits []hit, t0 time.Time) {
	if len(hits) == 0 {
		fmt.Println("  no requests")
		return
	}
	buckets := map[int]int{}
	last := 0
	for _, h := range hits {
		i := int(h.at.Sub(t0) / (5 * time.Second))
		buckets[i]++
		last = max(last, i)
	}
	for i := 0; i <= last; i++ {
		fmt.Printf("  %4d-%-4d s %6d %s\n", 5*i, 5*i+5, buckets[i], strings.Repeat("#", min(60, (buckets[i]+len(hits)/120)/max(1, len(hits)/60))))
	}
}

func (b *bench) phase2(ctx context.Context) error {
	c := b.c
	n := float64(c.entries)
	// A. gardenlet's resync: the reconcile annotation on the bucket and every entry at once, as a
	// gardenlet restarting without syncJitterPeriod (or every sync period) sends it.
	before, err := b.take(ctx)
	if err != nil {
		return err
	}
	mark := b.mark()
	progress("phase 2a: annotating the bucket and %d entries with gardener.cloud/operation=reconcile at once", c.entries)
	t0 := time.Now()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}}}`))
	if err := b.k8s.Patch(ctx, &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: bucketName}}, patch); err != nil {
		return err
	}
	if err := b.parallel(c.entries, func(i int) error {
		return b.k8s.Patch(ctx, &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: entryName(i)}}, patch)
	}); err != nil {
		return err
	}
	if err := b.waitFor(ctx, "entries reconciled (annotation gone, Succeeded)", b.countEntries(ctx, func(be *extensionsv1alpha1.BackupEntry) bool {
		_, annotated := be.Annotations[v1beta1constants.GardenerOperation]
		return !annotated && succeeded(be)
	})); err != nil {
		return err
	}
	elapsed := time.Since(t0)
	time.Sleep(2 * time.Second) // the last calls' metrics
	after, err := b.take(ctx)
	if err != nil {
		return err
	}
	hits := b.since(mark)
	fmt.Printf("\n## Phase 2a: a resync of %d unchanged entries and their bucket (the reconcile annotation on all at once)\n", c.entries)
	fmt.Printf("all reconciled %.1f s after the first annotation\n", elapsed.Seconds())
	printAPI(before.metrics, after.metrics, n)
	printCloud(before.metrics, after.metrics, hits, n)
	fmt.Println("cloud requests (proxy) per 5 s from the first annotation:")
	histogram(hits, t0)

	if c.inventoryInterval <= 0 {
		return nil
	}
	// B. the extension's own periodic work: a restart with --entry-inventory-interval, watched for
	// the start-up and one period (plus its 10% jitter) after it.
	progress("phase 2b: restarting the extension with --entry-inventory-interval %s and watching %s", c.inventoryInterval, c.inventoryInterval*23/10)
	b.ext.Stop()
	mark = b.mark()
	t0 = time.Now()
	if err := b.startExtension(ctx, "--entry-inventory-interval", c.inventoryInterval.String()); err != nil {
		return err
	}
	before, err = b.take(ctx)
	if err != nil {
		return err
	}
	time.Sleep(c.inventoryInterval * 23 / 10)
	after, err = b.take(ctx)
	if err != nil {
		return err
	}
	hits = b.since(mark)
	fmt.Printf("\n## Phase 2b: restart, then the extension's own periodic work (--entry-inventory-interval %s) for %s\n", c.inventoryInterval, c.inventoryInterval*23/10)
	printAPI(before.metrics, after.metrics, n)
	printCloud(before.metrics, after.metrics, hits, n)
	fmt.Printf("extension RSS: peak (VmHWM) %.0f MiB since the restart\n", after.procs["extension"].PeakRSSMiB)
	fmt.Println("cloud requests (proxy) per 5 s from the restart:")
	histogram(hits, t0)
	return nil
}

func (b *bench) phase3(ctx context.Context) error {
	c := b.c
	store, err := (&awsprovider.Provider{}).NewStore(ctx, provider.Credentials{Region: b.minio.Region, Data: map[string][]byte{
		"accessKeyID": []byte(b.minio.AccessKey), "secretAccessKey": []byte(b.minio.SecretKey),
		"endpoint": []byte(b.minio.Endpoint), "s3ForcePathStyle": []byte("true"),
	}}, nil)
	if err != nil {
		return err
	}
	progress("phase 3: writing %d × %d objects directly to MinIO", c.deleteEntries, c.objects)
	t := time.Now()
	total := c.deleteEntries * c.objects
	if err := b.parallel(total, func(i int) error {
		key := fmt.Sprintf("%s/etcd-main/v2/Incr-%08d", entryName(i/c.objects), i%c.objects)
		return store.PutObject(ctx, bucketName, key, []byte("snapshot "+key))
	}); err != nil {
		return err
	}
	progress("  written in %s", time.Since(t).Round(time.Second))
	before, err := b.take(ctx)
	if err != nil {
		return err
	}
	mark := b.mark()
	stopSampler := b.sampleCPU(ctx)
	progress("deleting %d entries at once", c.deleteEntries)
	t0 := time.Now()
	if err := b.parallel(c.deleteEntries, func(i int) error {
		return b.k8s.Delete(ctx, &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: entryName(i)}})
	}); err != nil {
		return err
	}
	gone := map[string]time.Duration{}
	if err := b.waitFor(ctx, "entries gone", func() (int, int, error) {
		list := &extensionsv1alpha1.BackupEntryList{}
		if err := b.k8s.List(ctx, list); err != nil {
			return 0, c.deleteEntries, err
		}
		present := map[string]bool{}
		for _, be := range list.Items {
			present[be.Name] = true
		}
		now := time.Since(t0)
		for i := range c.deleteEntries {
			if _, seen := gone[entryName(i)]; !seen && !present[entryName(i)] {
				gone[entryName(i)] = now
			}
		}
		return len(gone), c.deleteEntries, nil
	}); err != nil {
		return err
	}
	elapsed := time.Since(t0)
	busiest := stopSampler()
	after, err := b.take(ctx)
	if err != nil {
		return err
	}
	times := slices.Sorted(maps.Values(gone))
	left := 0
	for i := range c.deleteEntries {
		if err := store.ListObjects(ctx, bucketName, entryName(i)+"/", func(page []objectstore.ObjectVersion) error {
			left += len(page)
			return nil
		}); err != nil {
			return err
		}
	}
	fmt.Printf("\n## Phase 3: %d entries of %d objects each deleted at once\n", c.deleteEntries, c.objects)
	fmt.Printf("all gone %.1f s after the first delete: %.0f objects/s; per entry (1 s polls): median %.0f s, slowest %.0f s (%.1f× the median); objects left under the deleted prefixes: %d\n",
		elapsed.Seconds(), float64(total)/elapsed.Seconds(), times[len(times)/2].Seconds(), times[len(times)-1].Seconds(), times[len(times)-1].Seconds()/max(1, times[len(times)/2].Seconds()), left)
	printCloud(before.metrics, after.metrics, b.since(mark), float64(c.deleteEntries))
	printCPU(before, after, busiest)
	return nil
}
