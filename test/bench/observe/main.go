// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command observe measures the steady-state cost of the bucket probe and the entry inventory: the
// real aws binary runs against a local seed (envtest) and MinIO, with every request to MinIO
// counted by a reverse proxy (independently of the extension's own metrics), in one run side by
// side with a baseline: the same binary, buckets and objects with probe and inventory off.
//
// Time is scaled: the binary runs with the default intervals divided by --factor, so that a
// measured window of W seconds stands for W×factor seconds of a real seed; figures are reported
// per bucket and per entry per hour at the default intervals.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

type config struct {
	buckets, entries int
	small, large     int
	factor           float64
	window           time.Duration
	binary           string
}

func main() {
	var c config
	flag.IntVar(&c.buckets, "buckets", 2, "BackupBuckets per side; every other one (the first, third, ...) with generated MinIO credentials")
	flag.IntVar(&c.entries, "entries", 50, "BackupEntries per side, spread over the buckets; every other one small, the others large")
	flag.IntVar(&c.small, "small", 100, "snapshot objects under a small entry's prefix")
	flag.IntVar(&c.large, "large", 2000, "snapshot objects under a large entry's prefix")
	flag.Float64Var(&c.factor, "factor", 100, "time scale: the binary runs with the default intervals divided by this")
	flag.DurationVar(&c.window, "window", 120*time.Second, "measured window (wall time)")
	flag.StringVar(&c.binary, "binary", "", "the aws extension binary (default: built into .tmp/bench-observe)")
	flag.Parse()
	if c.buckets < 1 || c.entries < 1 || c.small < 2 || c.large < 2 || c.factor < 1 || c.window < 10*time.Second {
		fmt.Fprintln(os.Stderr, "need --buckets, --entries >= 1, --small, --large >= 2, --factor >= 1, --window >= 10s")
		os.Exit(2)
	}
	logf.SetLogger(logr.Discard()) // envtest's own log; the extension logs to its file
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench-observe failed:", err)
		os.Exit(1)
	}
}

var started = time.Now()

func progress(format string, args ...any) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(started).Seconds(), fmt.Sprintf(format, args...))
}

func run(c config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root, err := stack.RepoRoot()
	if err != nil {
		return err
	}
	work := filepath.Join(root, ".tmp", "bench-observe")
	_ = os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	probeEvery := time.Duration(float64(backupbucket.DefaultProbeInterval) / c.factor)
	inventoryEvery := time.Duration(float64(entryinventory.DefaultInterval) / c.factor)
	progress("bench-observe: %d buckets, %d entries (%d and %d objects) per side; factor %g: probe every %s, inventory every %s; window %s (stands for %s)",
		c.buckets, c.entries, c.small, c.large, c.factor, probeEvery, inventoryEvery, c.window, time.Duration(float64(c.window)*c.factor))

	if c.binary == "" {
		progress("building the aws binary")
		if c.binary, err = stack.BuildBinary(work, "aws"); err != nil {
			return err
		}
	}
	minio, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{})
	if err != nil {
		return err
	}
	defer minio.Stop()
	progress("MinIO %s", minio.Endpoint)

	sides := []*side{
		{name: "observed", short: "on", flags: []string{"--bucket-probe-interval", probeEvery.String(), "--entry-inventory-interval", inventoryEvery.String()}, observing: true},
		{name: "baseline", short: "off", flags: []string{"--bucket-probe-interval", "0", "--entry-inventory-interval", "0"}},
	}
	for _, s := range sides {
		if err := s.start(ctx, c, work, minio); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		defer s.stop()
		progress("%s: envtest %s, proxy %s, extension ready (%v; log %s)", s.name, s.host, s.proxy.URL, s.flags, s.ext.LogPath)
	}
	for _, s := range sides {
		if err := s.createBuckets(ctx, c, minio); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	for _, s := range sides {
		if err := s.waitBuckets(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		progress("%s: %d buckets Succeeded", s.name, len(s.buckets))
	}
	if err := writeSnapshots(ctx, c, minio, sides); err != nil {
		return err
	}
	for _, s := range sides {
		if err := s.createEntries(ctx, c, minio); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	for _, s := range sides {
		if err := s.waitEntries(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		progress("%s: %d entries Succeeded%s", s.name, len(s.entries), map[bool]string{true: " with BackupsFresh True; buckets BucketAvailable True"}[s.observing])
	}

	// One probe interval more, so that the probes the first reconciles woke are behind us.
	time.Sleep(probeEvery + time.Second)
	progress("measuring both sides for %s", c.window)
	for _, s := range sides {
		if err := s.begin(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	end := time.Now().Add(c.window)
	for time.Now().Before(end) {
		time.Sleep(min(15*time.Second, time.Until(end)))
		line := ""
		for _, s := range sides {
			n, w := s.live()
			line += fmt.Sprintf("  %s: %d requests, %d writes", s.name, n, w)
		}
		progress("window %3.0f%%:%s", 100*(1-float64(time.Until(end))/float64(c.window)), line)
	}
	for _, s := range sides {
		if err := s.finish(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return report(os.Stdout, c, sides)
}
