// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command rehearsal measures one pass of the rehearsal (--rehearse) over a large seed: the aws
// provider's rehearsal, in this process, reads a real kube-apiserver (envtest) holding one
// BackupBucket and --entries BackupEntries, and MinIO holding a short chain of snapshots under
// every entry's prefix. It reports the pass's time and its requests per entry: to the API server
// (counted by a wrapper of the client's transport, by verb) and to the store (the extension's own
// gardener_backup_cloud_requests_total, by operation). Then, with --drills, a second pass drills
// the first --drills entries (rehearsal.Options.Drills) and reports the drill's cost per entry:
// listing, download and verification of the chain are the real ones; the etcd restore is left out
// (a stand-in reads the deltas and restores nothing; bench-drill measures the restore).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/rehearsal"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const (
	region = "eu-central-1"
	bucket = "bench-rehearsal"
)

var started = time.Now()

func progress(format string, args ...any) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(started).Seconds(), fmt.Sprintf(format, args...))
}

func main() {
	entries := flag.Int("entries", 1000, "BackupEntries on the seed, all on one bucket")
	drills := flag.Int("drills", 20, "entries drilled in the second pass (0: no drill pass)")
	deltaBytes := flag.Int("full-bytes", 64<<10, "bytes of each entry's full snapshot (its deltas are 1 KiB)")
	flag.Parse()
	if *entries < 1 || *drills < 0 || *drills > *entries || *deltaBytes < 1 {
		fmt.Fprintln(os.Stderr, "need --entries >= 1, 0 <= --drills <= --entries, --full-bytes >= 1")
		os.Exit(2)
	}
	logf.SetLogger(logr.Discard())
	if err := run(*entries, *drills, *deltaBytes); err != nil {
		fmt.Fprintln(os.Stderr, "bench-rehearsal failed:", err)
		os.Exit(1)
	}
}

// apiCalls counts the client's requests to the API server by verb.
type apiCalls struct {
	mu    sync.Mutex
	verbs map[string]int
	total atomic.Int64
}

type countingTransport struct {
	next  http.RoundTripper
	calls *apiCalls
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	verb := r.Method
	if r.Method == http.MethodGet && isList(r.URL.Path) {
		verb = "LIST"
	}
	t.calls.mu.Lock()
	t.calls.verbs[verb]++
	t.calls.mu.Unlock()
	t.calls.total.Add(1)
	return t.next.RoundTrip(r)
}

// isList: the path names a collection (its last segment is a resource, plural).
func isList(path string) bool {
	last := path[strings.LastIndex(path, "/")+1:]
	return slices.Contains([]string{"backupbuckets", "backupentries", "secrets", "configmaps", "clusters", "gardens"}, last)
}

func (c *apiCalls) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.verbs {
		out[k] = v
	}
	return out
}

// cloudCalls are the extension's own counts of its requests to the store, by operation.
func cloudCalls() (map[string]float64, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "gardener_backup_cloud_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			op := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" {
					op = l.GetValue()
				}
			}
			out[op] += m.GetCounter().GetValue()
		}
	}
	return out, nil
}

func withHash(data []byte) []byte {
	sum := sha256.Sum256(data)
	return append(data, sum[:]...)
}

func run(n, drills, fullBytes int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	progress("bench-rehearsal: %d BackupEntries on one bucket, a full snapshot of %d bytes and 2 deltas each; a drill pass over %d", n, fullBytes, drills)
	testEnv, cfg, err := stack.StartEnvtest()
	if err != nil {
		return err
	}
	defer func() { _ = testEnv.Stop() }()
	minio, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region})
	if err != nil {
		return err
	}
	defer minio.Stop()
	progress("envtest %s, MinIO %s", cfg.Host, minio.Endpoint)

	scheme, err := app.Scheme()
	if err != nil {
		return err
	}
	calls := &apiCalls{verbs: map[string]int{}}
	counted := rest.CopyConfig(cfg)
	counted.QPS, counted.Burst = 1000, 2000 // the seed's API server is not the bottleneck measured
	counted.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, calls: calls} })
	k8s, err := client.New(counted, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	setup, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	if err := seed(ctx, setup, minio, n, fullBytes); err != nil {
		return err
	}

	p, err := app.Seeded(provider.Register(&awsprovider.Provider{}), nil)
	if err != nil {
		return err
	}
	r := &rehearsal.Rehearser{Provider: p, Reader: k8s, Client: k8s, Log: logr.Discard(),
		Options: rehearsal.Options{Interval: time.Hour, Namespace: "garden", Name: "gardener-extension-backup-aws-rehearsal", Inventory: entryinventory.DefaultOptions()}}

	type cost struct {
		took       time.Duration
		api, cloud map[string]float64
	}
	pass := func(name string, count int) (cost, error) {
		apiBefore, cloudBefore := calls.snapshot(), must(cloudCalls())
		progress("%s: rehearsing", name)
		t0 := time.Now()
		if err := r.Once(ctx); err != nil {
			return cost{}, err
		}
		c := cost{took: time.Since(t0), api: diff(apiBefore, calls.snapshot()), cloud: diffF(cloudBefore, must(cloudCalls()))}
		cm := &corev1.ConfigMap{}
		if err := setup.Get(ctx, client.ObjectKey{Namespace: r.Options.Namespace, Name: r.Options.Name}, cm); err != nil {
			return cost{}, err
		}
		var published rehearsal.Published
		if err := json.Unmarshal([]byte(cm.Data[rehearsal.ConfigMapKey]), &published); err != nil {
			return cost{}, err
		}
		progress("%s: %s in %s, %.1f ms per entry", name, plural(count), c.took.Round(time.Millisecond), float64(c.took.Microseconds())/1000/float64(count))
		fmt.Printf("  API server requests: %s\n", perEntryF(c.api, count))
		fmt.Printf("  store requests:      %s\n", perEntryF(c.cloud, count))
		fmt.Printf("  summary: %s\n", published.Summary)
		return c, nil
	}
	if _, err := pass("pass without drills", n); err != nil {
		return err
	}
	if drills == 0 {
		return nil
	}
	// The drill's cost: the same rehearsal over `drills` entries (the others moved to another
	// type, which it passes by), without and with drills; the difference is the drills'.
	if err := retype(ctx, setup, n, drills, "other"); err != nil {
		return err
	}
	without, err := pass(fmt.Sprintf("pass over %d entries without drills", drills), drills)
	if err != nil {
		return err
	}
	opts := restoredrill.DefaultOptions()
	opts.ReadRate = 0
	opts.ScratchDir, err = os.MkdirTemp("", "bench-rehearsal-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(opts.ScratchDir) }()
	r.Options.Drills = &restoredrill.Driller{Reader: k8s, Options: opts, SourceFor: restoredrill.StoreSource(k8s, p), Restore: readDeltas, Slots: restoredrill.NewSlots(opts)}
	with, err := pass(fmt.Sprintf("pass over %d entries with drills", drills), drills)
	if err != nil {
		return err
	}
	progress("the drill per entry (with - without, restore not included): %.1f ms", float64((with.took-without.took).Microseconds())/1000/float64(drills))
	fmt.Printf("  API server requests: %s\n", perEntryF(diffF(without.api, with.api), drills))
	fmt.Printf("  store requests:      %s\n", perEntryF(diffF(without.cloud, with.cloud), drills))
	return nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// readDeltas stands in for the etcd restore: it reads every delta frame the drill sends (the
// download and the verification of every snapshot's hash are the drill's own) and restores
// nothing.
func readDeltas(_ context.Context, ch drill.Chain, _ string, deltas *os.File) drill.Result {
	buf := make([]byte, 32<<10)
	for {
		if _, err := deltas.Read(buf); err != nil {
			break
		}
	}
	return drill.Result{Etcd: ch.Etcd, Full: ch.Full.Key, Deltas: len(ch.Deltas), Revision: ch.LastRevision()}
}

// seed creates the bucket in MinIO with every entry's chain, the operator's secret, the
// BackupBucket and the BackupEntries.
func seed(ctx context.Context, k8s client.Client, minio *awsstack.MinIO, n, fullBytes int) error {
	s3c := minio.S3Client()
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return err
	}
	full, delta := withHash(make([]byte, fullBytes)), withHash([]byte(strings.Repeat(" ", 1<<10)))
	now := time.Now().Unix()
	names := make(chan string)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range names {
				for i, key := range []string{
					fmt.Sprintf("%s/etcd-main/v2/Full-00000000-00000010-%d", name, now-120),
					fmt.Sprintf("%s/etcd-main/v2/Incr-00000011-00000020-%d", name, now-60),
					fmt.Sprintf("%s/etcd-main/v2/Incr-00000021-00000030-%d", name, now-30),
				} {
					body := delta
					if i == 0 {
						body = full
					}
					if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(string(body))}); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	for i := range n {
		names <- entryName(i)
		if (i+1)%250 == 0 {
			progress("seed: snapshots of %d entries in MinIO", i+1)
		}
	}
	close(names)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	data := minio.SecretData()
	delete(data, "region")
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}); err != nil {
		return err
	}
	ref := corev1.SecretReference{Namespace: "garden", Name: "backup-operator"}
	if err := k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}, Data: data}); err != nil {
		return err
	}
	bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: bucket},
		Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws",
			ProviderConfig: &runtime.RawExtension{Raw: []byte(`{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`)}},
			Region: region, SecretRef: ref}}
	if err := k8s.Create(ctx, bb); err != nil {
		return err
	}
	for i := range n {
		be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: entryName(i)},
			Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "aws"}, Region: region, BucketName: bucket, SecretRef: ref}}
		if err := k8s.Create(ctx, be); err != nil {
			return err
		}
		if (i+1)%250 == 0 {
			progress("seed: %d BackupEntries created", i+1)
		}
	}
	return nil
}

// retype gives entries from..n type typ: the rehearsal of the aws type passes them by.
func retype(ctx context.Context, k8s client.Client, n, from int, typ string) error {
	for i := from; i < n; i++ {
		be := &extensionsv1alpha1.BackupEntry{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: entryName(i)}, be); err != nil {
			return err
		}
		be.Spec.Type = typ
		if err := k8s.Update(ctx, be); err != nil {
			return err
		}
	}
	return nil
}

func entryName(i int) string { return fmt.Sprintf("shoot--bench--s%05d--uid%05d", i, i) }

func plural(n int) string { return fmt.Sprintf("%d BackupEntries", n) }

func diff(before, after map[string]int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = float64(d)
		}
	}
	return out
}

func diffF(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

func perEntryF(m map[string]float64, n int) string {
	keys := make([]string, 0, len(m))
	total := 0.0
	for k, v := range m {
		keys = append(keys, k)
		total += v
	}
	slices.Sort(keys)
	parts := []string{fmt.Sprintf("%.0f in all, %.2f per entry", total, total/float64(n))}
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, m[k]/float64(n)))
	}
	return strings.Join(parts, "; ")
}
