// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command scale measures the aws binary on a seed with many BackupEntries on one bucket: the real
// binary runs as a process (or --replicas processes sharing one leader-election lease) against
// envtest (kube-apiserver + etcd) and MinIO behind a counting proxy. Phases:
//
//  1. --entries entries created at once: time until all are Succeeded (polled with a List), the
//     extension's peak RSS, kube-apiserver requests (controller-runtime's rest_client_requests_total
//     on the extension's side, apiserver_request_total on kube-apiserver's) and cloud calls (the
//     extension's gardener_backup_cloud_requests_total, and the proxy's own count) per entry, the
//     CPU each process spent (from /proc/<pid>/stat), and heap and CPU profiles.
//  2. a resync of the unchanged entries and their bucket as gardenlet triggers it (the
//     gardener.cloud/operation=reconcile annotation on all of them at once): cloud writes and reads
//     per entry and how the cloud calls spread over time (5 s buckets of the proxy's timestamps);
//     then the extension's own periodic work per entry (the inventory, --inventory-interval) over
//     one period, after a restart of the binary with that interval.
//  3. --delete-entries of the entries, each given --objects objects first, deleted at once (while
//     --keep-entries neighbours and a few objects outside any entry stay): time to all gone, the
//     slowest entry against the median, optionally a SIGKILL of the leader part-way
//     (--kill-leader-at), and checks that nothing was lost and nothing deleted that should stay.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const bucketConfig = `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`

type config struct {
	entries, workers       int
	deleteEntries, objects int
	keepEntries            int
	seedWorkers            int
	replicas               int
	killLeaderAt           float64
	snapshots              bool
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
	flag.IntVar(&c.objects, "objects", 1000, "phase 3: objects written under each deleted and each kept entry's prefix first")
	flag.IntVar(&c.keepEntries, "keep-entries", 10, "phase 3: entries next to the deleted ones that stay, with --objects objects each (created first if --entries has too few)")
	flag.IntVar(&c.seedWorkers, "seed-workers", 64, "phase 3: concurrent writers of the objects (straight to MinIO, not through the proxy)")
	flag.IntVar(&c.replicas, "replicas", 1, "extension processes with the same flags, sharing one leader-election lease")
	flag.Float64Var(&c.killLeaderAt, "kill-leader-at", 0, "phase 3: SIGKILL the leader once this fraction of the deleted entries is gone (0: no kill; needs --replicas >= 2)")
	flag.BoolVar(&c.snapshots, "snapshots", true, "write one fresh full snapshot under each entry's prefix before creating it (untimed), as etcd-backup-restore names it")
	flag.DurationVar(&c.timeout, "timeout", 30*time.Minute, "give up waiting for a phase after this (phase 1 then reports what it has)")
	flag.StringVar(&c.binary, "binary", "", "the aws extension binary (default: built into .tmp/bench-scale)")
	flag.StringVar(&c.extFlags, "extension-flags", "", "extra flags for the binary, space separated (e.g. \"--max-concurrent-reconciles 20\")")
	flag.StringVar(&c.work, "work", ".tmp/bench-scale", "folder (below the repository root) for the binary, the extension's logs and the profiles; emptied first")
	flag.Parse()
	if msg := c.check(); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(2)
	}
	logf.SetLogger(logr.Discard())
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale failed:", err)
		os.Exit(1)
	}
}

// check returns what is wrong with the flags ("" if nothing).
func (c config) check() string {
	switch {
	case c.entries < 1 || c.workers < 1 || c.seedWorkers < 1 || c.objects < 1:
		return "need --entries >= 1, --workers >= 1, --seed-workers >= 1, --objects >= 1"
	case c.deleteEntries < 0 || c.deleteEntries > c.entries || c.keepEntries < 0:
		return "need 0 <= --delete-entries <= --entries and --keep-entries >= 0"
	case c.replicas < 1:
		return "need --replicas >= 1"
	case c.killLeaderAt < 0 || c.killLeaderAt >= 1:
		return "need 0 <= --kill-leader-at < 1"
	case c.killLeaderAt > 0 && (c.replicas < 2 || c.deleteEntries == 0):
		return "--kill-leader-at needs --replicas >= 2 (someone must take over) and --delete-entries > 0"
	}
	return ""
}

var started = time.Now()

func progress(format string, args ...any) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(started).Seconds(), fmt.Sprintf(format, args...))
}

func run(c config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Minute)
	defer cancel()
	root, err := stack.RepoRoot()
	if err != nil {
		return err
	}
	b := &bench{c: c, work: filepath.Join(root, c.work), n: c.entries, peakRSS: map[string]float64{}, deleted: map[string]int{}}
	_ = os.RemoveAll(b.work)
	if err := os.MkdirAll(b.work, 0o755); err != nil {
		return err
	}
	progress("bench-scale: %d entries on one bucket; resync %v (inventory interval %s); deletion of %d entries × %d objects (%d kept); %d replica(s), leader kill at %.2f; snapshots %v; machine: %d cores",
		c.entries, c.resync, c.inventoryInterval, c.deleteEntries, c.objects, c.keepEntries, c.replicas, c.killLeaderAt, c.snapshots, goruntime.NumCPU())
	if b.c.binary == "" {
		progress("building the aws binary")
		if b.c.binary, err = stack.BuildBinary(b.work, "aws"); err != nil {
			return err
		}
	}
	if b.minio, err = awsstack.StartMinIO(ctx, awsstack.MinIOOptions{}); err != nil {
		return err
	}
	defer b.minio.Stop()
	env, cfg, err := stack.StartEnvtest()
	if err != nil {
		return err
	}
	b.env = env
	defer func() { _ = env.Stop() }()
	if b.apiserver, err = newAPIServer(cfg); err != nil {
		return err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 2000, 4000 // the benchmark's own client must not be the bound
	cfg.Wrap(b.own.wrap)            // counts the benchmark's own requests, to tell them from the extension's
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
	if b.proxy, err = stack.StartProxy(b.minio.Endpoint, stack.ProxyOptions{OnRequest: b.record, BeforeRequest: b.recordDeletion}); err != nil {
		return err
	}
	defer b.proxy.Close()
	if b.direct, err = b.directStore(ctx); err != nil {
		return err
	}
	if err := b.startExtensions(ctx); err != nil {
		return err
	}
	defer b.stopExtensions()
	progress("MinIO %s behind proxy %s; envtest %s", b.minio.Endpoint, b.proxy.URL, cfg.Host)
	for _, r := range b.reps {
		progress("  %s: pid %d, metrics %s, pprof %s, log %s", r.name, r.ext.Pid(), r.ext.MetricsURL, r.pprofURL, r.ext.LogPath)
	}

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
