// Package benchutil measures and reports the entry-deletion benchmarks: wall time and how far the
// deleting process's live heap grew, and a table with the share of the raw limit.
package benchutil

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Result is one measured run.
type Result struct {
	Objects  int
	Delay    time.Duration
	Strategy string
	Seconds  float64
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

// PrintTable writes the results as a Markdown table; "share of raw" compares each strategy
// with the run named raw of the same size and delay.
func PrintTable(w io.Writer, results []Result) {
	fmt.Fprintf(w, "\n| objects | added delay | strategy | seconds | objects/s | share of raw limit | peak live heap growth |\n|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		share := "-"
		for _, o := range results {
			if o.Objects == r.Objects && o.Delay == r.Delay && o.Strategy == "raw" {
				share = fmt.Sprintf("%.0f %%", 100*o.Seconds/r.Seconds)
			}
		}
		fmt.Fprintf(w, "| %d | %s | %s | %.1f | %.0f | %s | %.1f MiB |\n", r.Objects, r.Delay, r.Strategy, r.Seconds, float64(r.Objects)/r.Seconds, share, r.PeakHeapMiB)
	}
}
