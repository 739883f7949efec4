// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// crossRepeat measures the cross-type streamed copy of n deltas (MinIO to Azurite) side by side
// with both raw rates, reps times, each repetition in turn: the raw read of the source, the raw
// write of Azurite, both at once (what a copy can reach where the stores share this machine's
// cores with it), the streamed copy into a fresh container and a second pass with nothing to copy
// (the listings). Beside each wall time it
// counts the CPU seconds of this process (the extension's side), of MinIO and of Azurite (from
// /proc): on a machine shared with other jobs the wall times vary, the CPU a step costs much less.
// With profileDir, each copy's CPU profile is written there (copy-<rep>.pprof), and each raw
// write's (raw-write-<rep>.pprof).
func crossRepeat(ctx context.Context, n, kib, parallelism, reps int, profileDir string) error {
	m, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: "eu-central-1"})
	if err != nil {
		return err
	}
	defer m.Stop()
	const src = "src"
	if _, err := m.S3Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: new(src)}); err != nil {
		return err
	}
	sa, err := newStores(ctx, m)
	if err != nil {
		return err
	}
	azurite, err := azurestack.StartAzurite()
	if err != nil {
		return err
	}
	defer azurite.Stop()
	containers := []string{"raw"}
	for r := range reps {
		containers = append(containers, fmt.Sprintf("dst-%d", r))
	}
	az, err := newAzure(ctx, azurite, containers...)
	if err != nil {
		return err
	}
	s := set{entry: "shoot--bench--deltas--1"}
	for range n {
		s.sizes = append(s.sizes, int64(kib)<<10)
	}
	keys := s.keys()
	prefix, err := objectstore.EntryPrefix(s.entry)
	if err != nil {
		return err
	}
	if err := each(n, parallelism, func(i int) error {
		return sa.PutObjectStream(objectstore.WithOperation(ctx, objectstore.OpPutObject), src, keys[i], generated(int64(i), s.sizes[i]), s.sizes[i])
	}); err != nil {
		return err
	}
	servers := childProcesses()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("cross-type repeat: %d deltas of %d KiB, MinIO (%s) -> Azurite, %d at once, %d cores, load %s; servers %v\n\n",
		n, kib, m.Endpoint, parallelism, runtime.NumCPU(), strings.TrimSpace(string(load)), servers)
	fmt.Printf("| rep | raw read s | raw write s | copy s | copy / raw write | copy / (read+write) | read and write at once s | copy / at once | CPU s raw read (ext, MinIO, Azurite) | CPU s raw write | CPU s at once | CPU s copy | nothing to copy: s, CPU s | load |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	type cpu struct{ self, minio, azurite float64 }
	sample := func() cpu {
		c := cpu{self: procCPU("self")}
		for pid, name := range servers {
			switch {
			case strings.Contains(name, "minio"):
				c.minio += procCPU(pid)
			default:
				c.azurite += procCPU(pid)
			}
		}
		return c
	}
	timed := func(profile string, fn func() error) (time.Duration, cpu, error) {
		if profileDir != "" && profile != "" {
			f, err := os.Create(filepath.Join(profileDir, profile))
			if err != nil {
				return 0, cpu{}, err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return 0, cpu{}, err
			}
			defer pprof.StopCPUProfile()
		}
		runtime.GC()
		before, start := sample(), time.Now()
		err := fn()
		elapsed, after := time.Since(start), sample()
		return elapsed, cpu{after.self - before.self, after.minio - before.minio, after.azurite - before.azurite}, err
	}
	rawRead := func() error {
		return each(n, parallelism, func(i int) error {
			body, err := sa.OpenObject(objectstore.WithOperation(ctx, objectstore.OpOpenObject), src, keys[i], "")
			if err != nil {
				return err
			}
			defer body.Close()
			_, err = io.Copy(io.Discard, body)
			return err
		})
	}
	rawWrite := func() error {
		return each(n, parallelism, func(i int) error {
			return az.PutObjectStream(objectstore.WithOperation(ctx, objectstore.OpPutObject), "raw", keys[i], generated(int64(i), s.sizes[i]), s.sizes[i])
		})
	}
	var shares, sums, boths []float64
	for r := range reps {
		read, cr, err := timed("", rawRead)
		if err != nil {
			return err
		}
		write, cw, err := timed(fmt.Sprintf("raw-write-%d.pprof", r), rawWrite)
		if err != nil {
			return err
		}
		// Both raw rates at once: what a copy that reads the one and writes the other can reach
		// where the two stores and this process share the machine's cores.
		both, cb, err := timed("", func() error {
			var wg sync.WaitGroup
			var rerr, werr error
			wg.Go(func() { rerr = rawRead() })
			wg.Go(func() { werr = rawWrite() })
			wg.Wait()
			return errors.Join(rerr, werr)
		})
		if err != nil {
			return err
		}
		cp, cc, err := timed(fmt.Sprintf("copy-%d.pprof", r), func() error {
			res, err := replication.Copy(ctx, replication.From{Store: sa, Bucket: src}, replication.To{Store: az, Bucket: containers[r+1]}, prefix, replication.Options{Parallelism: parallelism})
			if err == nil && (res.Copied != n || res.Unguarded > 0) {
				err = fmt.Errorf("copied %d of %d, %d unguarded", res.Copied, n, res.Unguarded)
			}
			return err
		})
		if err != nil {
			return err
		}
		// A second pass into the same container copies nothing: what the listings and the decision cost.
		again, ca, err := timed("", func() error {
			_, err := replication.Copy(ctx, replication.From{Store: sa, Bucket: src}, replication.To{Store: az, Bucket: containers[r+1]}, prefix, replication.Options{Parallelism: parallelism})
			return err
		})
		if err != nil {
			return err
		}
		load, _ := os.ReadFile("/proc/loadavg")
		share, sum, together := write.Seconds()/cp.Seconds(), (read+write).Seconds()/cp.Seconds(), both.Seconds()/cp.Seconds()
		shares, sums, boths = append(shares, share), append(sums, sum), append(boths, together)
		f := func(c cpu) string { return fmt.Sprintf("%.2f, %.2f, %.2f", c.self, c.minio, c.azurite) }
		fmt.Printf("| %d | %.2f | %.2f | %.2f | %.0f %% | %.0f %% | %.2f | %.0f %% | %s | %s | %s | %s | %s | %s |\n", r+1, read.Seconds(), write.Seconds(), cp.Seconds(),
			100*share, 100*sum, both.Seconds(), 100*together, f(cr), f(cw), f(cb), f(cc), fmt.Sprintf("%.2f; %s", again.Seconds(), f(ca)), strings.Join(strings.Fields(string(load))[:3], " "))
	}
	slices.Sort(shares)
	slices.Sort(sums)
	slices.Sort(boths)
	fmt.Printf("\ncopy / raw write: median %.0f %%, min %.0f %%, max %.0f %%; copy / (raw read + raw write, one after the other): median %.0f %%; copy / (raw read and raw write at once): median %.0f %%, min %.0f %%, max %.0f %%\n",
		100*shares[len(shares)/2], 100*shares[0], 100*shares[len(shares)-1], 100*sums[len(sums)/2], 100*boths[len(boths)/2], 100*boths[0], 100*boths[len(boths)-1])
	return nil
}

// childProcesses are this process's children (the servers it started) by pid, with their names.
func childProcesses() map[string]string {
	out := map[string]string{}
	self := strconv.Itoa(os.Getpid())
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		name, ppid := procStat(d.Name())
		if ppid == self {
			out[d.Name()] = name
		}
	}
	return out
}

// procStat is a process's name and parent pid from /proc/<pid>/stat.
func procStat(pid string) (name, ppid string) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return "", ""
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < 0 {
		return "", ""
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 2 {
		return "", ""
	}
	return s[open+1 : end], fields[1]
}

// procCPU is a process's user and system CPU seconds so far (/proc/<pid>/stat, 100 ticks a second).
func procCPU(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(fields[11], 64)
	k, _ := strconv.ParseFloat(fields[12], 64)
	return (u + k) / 100
}
