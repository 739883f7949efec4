// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package benchutil measures and reports the entry-deletion benchmarks: wall time and how far the
// deleting process's live heap grew, and a table with the share of the raw limit.
package benchutil

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

// Result is one measured run.
type Result struct {
	// Objects is how many objects the run deleted; Size is the prefix size of the comparison it
	// belongs to (larger than Objects when the strategy ran on a sample, see Strategy.Sample).
	Objects, Size int
	Delay         time.Duration
	Strategy      string
	Seconds       float64
	// PeakHeapMiB is how far the live heap grew above its level at the start of the run.
	PeakHeapMiB float64
}

// liveHeap is the heap still reachable at the last garbage collection: what the process needs,
// without the garbage that merely awaits collection.
const liveHeap = "/gc/heap/live:bytes"

func live() uint64 {
	s := []metrics.Sample{{Name: liveHeap}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Measure runs fn and returns its wall time and the peak growth of the live heap meanwhile
// (sampled every 10 ms; the live heap is measured at each garbage collection).
func Measure(fn func() error) (time.Duration, float64, error) {
	runtime.GC()
	debug.FreeOSMemory()
	base := live()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if l := live(); l > base && l-base > peak.Load() {
				peak.Store(l - base)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	start := time.Now()
	err := fn()
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	return elapsed, float64(peak.Load()) / (1 << 20), err
}

func (r Result) rate() float64 { return float64(r.Objects) / r.Seconds }

// PrintTable writes the results as a Markdown table; "share of raw" compares each strategy's
// rate (objects/s) with the run named raw of the same size and delay. A sampled run shows the
// sample and the size it stands for, and its seconds are extrapolated to that size.
func PrintTable(w io.Writer, results []Result) {
	fmt.Fprintf(w, "\n| objects | added delay | strategy | seconds | objects/s | share of raw limit | peak live heap growth |\n|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		share := "-"
		for _, o := range results {
			if o.Size == r.Size && o.Delay == r.Delay && o.Strategy == "raw" {
				share = fmt.Sprintf("%.0f %%", 100*r.rate()/o.rate())
			}
		}
		objects, secs := fmt.Sprint(r.Size), fmt.Sprintf("%.1f", r.Seconds)
		if r.Objects != r.Size {
			objects = fmt.Sprintf("%d (sample of %d)", r.Size, r.Objects)
			secs = fmt.Sprintf("%.0f (extrapolated; %.1f measured)", float64(r.Size)/r.rate(), r.Seconds)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.0f | %s | %.1f MiB |\n", objects, r.Delay, r.Strategy, secs, r.rate(), share, r.PeakHeapMiB)
	}
}

// Strategy is one way of deleting a prefix: Run deletes the objects through endpoint.
type Strategy struct {
	Name string
	Run  func(ctx context.Context, endpoint string, objects int) error
	// Sample, when positive, runs the strategy on at most this many of the objects: for a
	// strategy too slow to run at full size whose rate does not depend on the size (one
	// request per object, sequentially). The table extrapolates its time.
	Sample int
}

// RunOne writes keys into bucket with direct (untimed), times s deleting them through endpoint,
// checks that exactly neighbour is left, prints one line and returns the result.
func RunOne(ctx context.Context, direct conformance.Stores, bucket string, keys []string, neighbour string, s Strategy, endpoint string, delay time.Duration) (Result, error) {
	size := len(keys)
	if s.Sample > 0 && s.Sample < len(keys) {
		keys = keys[:s.Sample]
	}
	fmt.Printf("  %6d objects, delay %-5s %-8s: writing ...", len(keys), delay, s.Name)
	start := time.Now()
	if err := conformance.PutMany(ctx, direct, bucket, keys); err != nil {
		return Result{}, err
	}
	fmt.Printf(" (%s) deleting ...", time.Since(start).Round(time.Second))
	elapsed, peak, err := Measure(func() error { return s.Run(ctx, endpoint, len(keys)) })
	if err != nil {
		return Result{}, fmt.Errorf("%s at %s: %w", s.Name, delay, err)
	}
	left, err := conformance.ListKeys(ctx, direct, bucket, "")
	if err != nil {
		return Result{}, err
	}
	if len(left) != 1 || left[0] != neighbour {
		return Result{}, fmt.Errorf("%s at %s left %d objects (want only the neighbour)", s.Name, delay, len(left))
	}
	secs := elapsed.Seconds()
	fmt.Printf(" %.1f s, %.0f objects/s, peak heap +%.1f MiB\n", secs, float64(len(keys))/secs, peak)
	return Result{Objects: len(keys), Size: size, Delay: delay, Strategy: s.Name, Seconds: secs, PeakHeapMiB: peak}, nil
}

// ParseSizes parses a comma-separated list of positive object counts (the --objects flags).
func ParseSizes(list string) ([]int, error) {
	var sizes []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad size %q", s)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
