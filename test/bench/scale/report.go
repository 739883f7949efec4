// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/bench/benchutil"
)

func printAPI(before, after benchutil.MetricSet, n float64) {
	printPerEntry("kube-apiserver requests of the extension", "rest_client_requests_total", "method", before, after, n)
	fmt.Println(" per entry")
}

func printCloud(before, after benchutil.MetricSet, hits []hit, n float64) {
	printPerEntry("cloud calls", "gardener_backup_cloud_requests_total", "operation", before, after, n)
	w := 0
	for _, h := range hits {
		if h.write {
			w++
		}
	}
	fmt.Printf(" per entry\nthe proxy counted %d requests to MinIO (%.2f per entry), %d of them writes (%.2f per entry)\n", len(hits), float64(len(hits))/n, w, float64(w)/n)
}

// printPerEntry prints a counter's increase over the phase, in all and per entry, and per value of
// label; the caller ends the line.
func printPerEntry(what, metric, label string, before, after benchutil.MetricSet, n float64) {
	d := benchutil.Delta(before, after, metric, label)
	total := 0.0
	for _, v := range d {
		total += v
	}
	fmt.Printf("%s (%s): %.0f, %.2f per entry;", what, metric, total, total/n)
	for _, k := range slices.Sorted(maps.Keys(d)) {
		fmt.Printf(" %s %.2f", k, d[k]/n)
	}
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

// printRSS prints the extensions' RSS: with one replica as before, with more each one's peak
// (a killed one's as last read before the kill).
func (b *bench) printRSS(after snapshot, what string) {
	if len(b.reps) == 1 {
		ext := after.procs[b.reps[0].name]
		fmt.Printf("extension RSS: peak (VmHWM) %.0f MiB%s, now (VmRSS) %.0f MiB\n", ext.PeakRSSMiB, what, ext.RSSMiB)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Printf("extension RSS, peak (VmHWM)%s:", what)
	for _, r := range b.reps {
		note := ""
		if r.killed {
			note = " (killed)"
		}
		fmt.Printf(" %s %.0f MiB%s;", r.name, b.peakRSS[r.name], note)
	}
	fmt.Println()
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

// printFresh prints how many entries have the BackupsFresh condition True, False, Unknown or
// not at all (the inventory sets it).
func (b *bench) printFresh(ctx context.Context) {
	list := &extensionsv1alpha1.BackupEntryList{}
	if err := b.k8s.List(ctx, list); err != nil {
		fmt.Printf("BackupsFresh: listing the entries failed: %v\n", err)
		return
	}
	counts := map[string]int{}
	for _, be := range list.Items {
		status := "absent"
		for _, c := range be.Status.Conditions {
			if c.Type == "BackupsFresh" {
				status = string(c.Status)
			}
		}
		counts[status]++
	}
	fmt.Printf("BackupsFresh of the %d entries: True %d, False %d, Unknown %d, absent %d\n",
		len(list.Items), counts["True"], counts["False"], counts["Unknown"], counts["absent"])
}
