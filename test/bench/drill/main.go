// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command drill benchmarks a restore drill of a large chain in MinIO (make bench-drill): for each
// size, a full snapshot of about that many MiB and --deltas deltas, written as
// etcd-backup-restore v0.43.0 writes them, then, in one measuring process, the raw download rate
// of the same objects through the same data plane (the aws DataPlane's OpenObject, read to
// io.Discard) and the drill as the restoredrill controller runs it (drill.FetchAndRestore in the
// process, the restore in a child process, overlapping), with the peak RSS of both sides. See
// docs/dev/performance.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const measureCommand = "measure"

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case measureCommand: // the measuring process
			if err := measure(context.Background(), os.Stdin, os.Stdout); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			return
		case seedCommand: // the measuring process of the seed-scale mode
			if err := measureSeed(context.Background(), os.Stdin, os.Stdout); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			return
		case drill.ChildCommandName: // the restore child, as the extension's binary runs it
			if err := drill.RunChildProcess(context.Background()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			return
		}
	}
	sizes := flag.String("sizes", "128,1024", "full snapshot sizes in MiB, comma-separated: RSS must not grow with the size")
	deltas := flag.Int("deltas", 10000, "deltas after each full snapshot (two revisions each)")
	latency := flag.Duration("latency", 0, "put the measurement behind a proxy that waits this long before forwarding each request")
	streamRate := flag.Int64("stream-rate", 0, "put the measurement behind a proxy that sends each response body at most this many MiB/s (0: no limit)")
	cgroup := flag.String("cgroup", "", "a cgroup v1 memory cgroup directory (made by the caller, with memory.limit_in_bytes set) to run the measuring process and its restore child in, as the extension's container would; its peak usage, failcnt and OOM kills are reported")
	entries := flag.Int("entries", 0, "seed-scale mode: drill this many entries, each a chain of --entry-mib and --entry-deltas, one after the other, behind a counting proxy")
	entryMiB := flag.Int("entry-mib", 4, "seed-scale mode: each entry's full snapshot, MiB of values")
	entryDeltas := flag.Int("entry-deltas", 50, "seed-scale mode: each entry's deltas")
	flag.Parse()
	net := network{latency: *latency, streamRate: *streamRate << 20, cgroup: *cgroup}
	if *entries > 0 {
		net.seed = [3]int{*entries, *entryMiB, *entryDeltas}
	}
	if err := run(*sizes, *deltas, net); err != nil {
		fmt.Fprintln(os.Stderr, "bench-drill:", err)
		os.Exit(1)
	}
}

// network says whether the measuring process reaches MinIO through the proxy, and as what.
type network struct {
	latency    time.Duration
	streamRate int64
	seed       [3]int // entries, MiB, deltas of the seed-scale mode
	cgroup     string // a memory cgroup to measure in
}

func run(sizeList string, deltas int, net network) error {
	var sizes []int
	for _, s := range strings.Split(sizeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("--sizes: %q is no positive number of MiB", s)
		}
		sizes = append(sizes, n)
	}
	ctx := context.Background()
	work, err := os.MkdirTemp("", "bench-drill-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	minio, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: "eu-central-1"})
	if err != nil {
		return err
	}
	defer minio.Stop()
	bucket := "bench-drill"
	if _, err := minio.S3Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		return err
	}
	secret := minio.SecretData()
	delete(secret, "region")
	var p *proxy
	if net.latency > 0 || net.streamRate > 0 || net.seed[0] > 0 {
		if p, err = startProxy(minio.Endpoint, net.latency, net.streamRate); err != nil {
			return err
		}
		defer p.stop()
		secret["endpoint"] = []byte(p.url)
		fmt.Printf("bench-drill: the measuring process reads through a proxy: %s latency per request, %d MiB/s per stream (0: unlimited)\n", net.latency, net.streamRate>>20)
	}
	if net.seed[0] > 0 {
		return runSeed(ctx, minio.S3Client(), p, secret, minio.Region, bucket, work, net.seed[0], net.seed[1], net.seed[2])
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Printf("bench-drill: MinIO %s; full snapshots of %v MiB, %d deltas each; %d cores\n\n",
		minio.Endpoint, sizes, deltas, numCPU())
	fmt.Println("| full snapshot | deltas | chain read | raw (OpenObject to /dev/null) | fetch alone (controller side) | drill (fetch and restore overlapping) | drill / raw | raw, 4 deltas at a time beside the full snapshot | drill / raw (4 at a time) | fetch / raw | full alone: raw, fetch, fetch / raw | peak RSS raw read | peak RSS fetch | peak RSS restore child (anon, file) | restored |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, mib := range sizes {
		prefix := fmt.Sprintf("shoot--bench--%d--1/etcd-main/v2/", mib)
		began := time.Now()
		c, err := generate(ctx, minio.S3Client(), bucket, prefix, work, mib, deltas)
		if err != nil {
			return fmt.Errorf("writing the %d MiB chain: %w", mib, err)
		}
		fmt.Fprintf(os.Stderr, "wrote %s and %d deltas (%d bytes) to revision %d in %s\n", prefix, c.deltas, c.bytes, c.revision, time.Since(began).Round(time.Second))
		scratch := filepath.Join(work, "scratch")
		if err := os.MkdirAll(scratch, 0o755); err != nil {
			return err
		}
		in, err := json.Marshal(job{Secret: secret, Region: minio.Region, Bucket: bucket, Prefix: strings.TrimSuffix(prefix, "etcd-main/v2/"), Scratch: scratch})
		if err != nil {
			return err
		}
		var out, errOut bytes.Buffer
		cmd := exec.Command(self, measureCommand)
		if net.cgroup != "" { // join the cgroup before the measuring process starts: its children inherit it
			cmd = exec.Command("/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$1" "$2"`, net.cgroup, self, measureCommand)
		}
		cmd.Env = os.Environ()
		cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &out, &errOut
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("measuring: %w\n%s", err, errOut.String())
		}
		var m measurement
		if net.cgroup != "" {
			fmt.Fprintf(os.Stderr, "cgroup %s: limit %s, max usage %s, failcnt %s, oom_control %q\n", net.cgroup,
				cgroupFile(net.cgroup, "memory.limit_in_bytes"), cgroupFile(net.cgroup, "memory.max_usage_in_bytes"),
				cgroupFile(net.cgroup, "memory.failcnt"), cgroupFile(net.cgroup, "memory.oom_control"))
		}
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			return fmt.Errorf("measuring: %w: %s\n%s", err, out.String(), errOut.String())
		}
		if m.Err != "" {
			return fmt.Errorf("measuring the %d MiB chain: %s", mib, m.Err)
		}
		if m.Revision != c.revision || m.BytesRead != c.bytes || m.RawBytes != c.bytes {
			return fmt.Errorf("the drill restored revision %d reading %d bytes (raw %d); the chain ends at %d with %d bytes", m.Revision, m.BytesRead, m.RawBytes, c.revision, c.bytes)
		}
		fmt.Fprintf(os.Stderr, "%d MiB: the restore child stood on the full snapshot %s after it started, then waited %s for deltas; drill %s, raw %s (full snapshot alone %s)\n",
			mib, m.ChildFullRestored.Round(time.Millisecond), m.ChildDeltaWait.Round(time.Millisecond), m.DrillTime.Round(time.Millisecond), m.RawTime.Round(time.Millisecond), m.RawFullTime.Round(time.Millisecond))
		raw := rate(m.RawBytes, m.RawTime)
		fetch, drilled := rate(m.BytesRead, m.FetchTime), rate(m.BytesRead, m.DrillTime)
		rawFull, fetchFull := rate(m.FullBytes, m.RawFullTime), rate(m.FullBytes, m.FullFetchTime)
		rawPar := rate(m.RawBytes, m.RawParTime)
		fmt.Printf("| %.0f MiB | %d | %.0f MiB | %.0f MiB/s (%s) | %.0f MiB/s (%s) | %.0f MiB/s (%s) | %.0f %% | %.0f MiB/s (%s) | %.0f %% | %.0f %% | %.0f MiB/s, %.0f MiB/s, %.0f %% | %.0f MiB | %.0f MiB | %.0f MiB (%.0f, %.0f) | rev %d, %d keys |\n",
			mibOf(c.fullSize), m.Deltas, mibOf(m.BytesRead), raw, m.RawTime.Round(time.Millisecond), fetch, m.FetchTime.Round(time.Millisecond),
			drilled, m.DrillTime.Round(time.Millisecond), 100*drilled/raw, rawPar, m.RawParTime.Round(time.Millisecond), 100*drilled/rawPar, 100*fetch/raw, rawFull, fetchFull, 100*fetchFull/rawFull,
			float64(m.RawPeakKiB)/1024, float64(m.FetchPeakKiB)/1024, float64(m.ChildPeakKiB)/1024, float64(m.ChildPeakAnonKiB)/1024, float64(m.ChildPeakFileKiB)/1024, m.Revision, m.Keys)
	}
	return nil
}

func rate(n int64, d time.Duration) float64 { return mibOf(n) / d.Seconds() }

func mibOf(n int64) float64 { return float64(n) / (1 << 20) }

func numCPU() int { return runtime.NumCPU() }

// cgroupFile is a file of a cgroup, trimmed ("?" if it cannot be read).
func cgroupFile(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
