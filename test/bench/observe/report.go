// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gardener-extension-backup/gardener-extension-backup/test/bench/benchutil"
)

// tally is what one side's proxy counted in the window.
type tally struct {
	total, reads, writes int
	byOp                 map[string]int
	// probes: the probe's listings (ListObjectsV2 max-keys=1), by whether the bucket has
	// generated credentials.
	probes map[bool]int
	// inventory: its listing pages and the bucket versioning reads, by entry size.
	pages, listings map[int]int
	versioning      int
}

func (s *side) tally() tally {
	t := tally{byOp: map[string]int{}, probes: map[bool]int{}, pages: map[int]int{}, listings: map[int]int{}}
	generated := map[string]bool{}
	for _, b := range s.buckets {
		generated[b.name] = b.generated
	}
	size := map[string]int{}
	for _, e := range s.entries {
		size[e.name+"/"] = e.objects
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reqs {
		t.total++
		if r.write {
			t.writes++
		} else {
			t.reads++
		}
		t.byOp[fmt.Sprintf("%-6s %s (%d)", r.method, r.op, r.status)]++
		switch {
		case r.op == "ListObjectsV2 max-keys=1":
			t.probes[generated[r.bucket]]++
		case r.listing():
			t.pages[size[r.prefix]]++
			if r.firstPage {
				t.listings[size[r.prefix]]++
			}
		case r.op == "GetBucketVersioning":
			t.versioning++
		}
	}
	return t
}

func report(w io.Writer, c config, sides []*side) error {
	on, off := sides[0], sides[1]
	ton, toff := on.tally(), off.tally()
	hours := c.window.Seconds() * c.factor / 3600 // of a real seed
	perHour := func(n float64, per int) string {
		if per == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", n/float64(per)/hours)
	}
	nGen, nPlain := 0, 0
	for _, b := range on.buckets {
		if b.generated {
			nGen++
		} else {
			nPlain++
		}
	}
	nSize := map[int]int{}
	for _, e := range on.entries {
		nSize[e.objects]++
	}

	fmt.Fprintf(w, "\n## Steady state: %d buckets (%d with generated credentials), %d entries (%d × %d objects, %d × %d objects)\n",
		len(on.buckets), nGen, len(on.entries), nSize[c.small], c.small, nSize[c.large], c.large)
	fmt.Fprintf(w, "window %s × factor %g = %.2f h of a seed at the default intervals (probe 5m, inventory 30m, +0-10%% jitter)\n\n", c.window, c.factor, hours)

	fmt.Fprintln(w, "Requests to MinIO counted by the proxies in the window:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "side\ttotal\tGET/HEAD\tPUT/POST/DELETE\t")
	fmt.Fprintf(tw, "probe+inventory on\t%d\t%d\t%d\t\n", ton.total, ton.reads, ton.writes)
	fmt.Fprintf(tw, "baseline (both off)\t%d\t%d\t%d\t\n", toff.total, toff.reads, toff.writes)
	fmt.Fprintf(tw, "difference\t%d\t%d\t%d\t\n", ton.total-toff.total, ton.reads-toff.reads, ton.writes-toff.writes)
	_ = tw.Flush()
	if toff.total > 0 {
		fmt.Fprintf(w, "ratio on/baseline: %.1f\n", float64(ton.total)/float64(toff.total))
	} else {
		fmt.Fprintln(w, "ratio on/baseline: baseline made no request in the window")
	}

	fmt.Fprintln(w, "\nBy request (method, S3 operation, status), in the window:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "request\ton\tbaseline\t")
	ops := slices.Sorted(maps.Keys(ton.byOp))
	for _, op := range slices.Sorted(maps.Keys(toff.byOp)) {
		if _, ok := ton.byOp[op]; !ok {
			ops = append(ops, op)
		}
	}
	for _, op := range ops {
		fmt.Fprintf(tw, "%s\t%d\t%d\t\n", op, ton.byOp[op], toff.byOp[op])
	}
	_ = tw.Flush()

	// Writes are 0 in any report printed: the program fails below otherwise.
	fmt.Fprintln(w, "\nPer resource per hour at the default intervals (proxy counts, baseline subtracted):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "what\tGET/HEAD per hour\tPUT/POST/DELETE per hour\t")
	fmt.Fprintf(tw, "bucket with generated credentials (probe: 2 listings)\t%s\t0\t\n", perHour(float64(ton.probes[true]-toff.probes[true]), nGen))
	fmt.Fprintf(tw, "bucket without (probe: 1 listing)\t%s\t0\t\n", perHour(float64(ton.probes[false]-toff.probes[false]), nPlain))
	inventories := 0
	for _, n := range []int{c.small, c.large} {
		inventories += ton.listings[n]
	}
	for _, n := range []int{c.small, c.large} {
		// Each inventory reads the bucket's versioning once before it lists; shared out by listings.
		versioning := 0.0
		if inventories > 0 {
			versioning = float64(ton.versioning-toff.versioning) * float64(ton.listings[n]) / float64(inventories)
		}
		fmt.Fprintf(tw, "entry of %d objects (inventory: versioning + pages)\t%s\t0\t\n", n, perHour(float64(ton.pages[n]-toff.pages[n])+versioning, nSize[n]))
	}
	_ = tw.Flush()

	// The same from what one probe and one inventory cost, at the nominal rates: a probe per
	// bucket every 5m and an inventory per entry every 30m, stretched by 5% (the jitter's mean).
	// The measured rates above carry the phase of the window: the entries started together, so
	// the window holds a whole number of their rounds.
	probeRounds, inventoryRounds := 3600/(300*1.05), 3600/(1800*1.05)
	fmt.Fprintf(w, "\nPer resource per hour from the cost of one probe or inventory at the nominal rates (%.2f probes, %.2f inventories per hour):\n", probeRounds, inventoryRounds)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "what\trequests per probe/inventory\tGET/HEAD per hour\t")
	totalProbeListings := float64(ton.probes[true] + ton.probes[false])
	fmt.Fprintf(tw, "bucket with generated credentials\t2\t%.1f\t\n", 2*probeRounds)
	fmt.Fprintf(tw, "bucket without\t1\t%.1f\t\n", probeRounds)
	for _, n := range []int{c.small, c.large} {
		if ton.listings[n] == 0 {
			continue
		}
		per := float64(ton.pages[n])/float64(ton.listings[n]) + float64(ton.versioning)/float64(max(inventories, 1))
		fmt.Fprintf(tw, "entry of %d objects (GetBucketVersioning + pages)\t%.2f\t%.1f\t\n", n, per, per*inventoryRounds)
	}
	_ = tw.Flush()
	if n := on.modified["BackupBucket"]; n > 0 {
		fmt.Fprintf(w, "probe listings per bucket status write (one per probe): %.0f / %d = %.2f (2 with generated credentials, 1 without)\n", totalProbeListings, n, totalProbeListings/float64(n))
	}

	fmt.Fprintln(w, "\nInventories in the window (proxy: listings begun, pages):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "entry size\tentries\tinventories\tper entry per hour\tpages\tpages per inventory\t")
	for _, n := range []int{c.small, c.large} {
		ppi := "-"
		if ton.listings[n] > 0 {
			ppi = fmt.Sprintf("%.2f", float64(ton.pages[n])/float64(ton.listings[n]))
		}
		fmt.Fprintf(tw, "%d objects\t%d\t%d\t%s\t%d\t%s\t\n", n, nSize[n], ton.listings[n], perHour(float64(ton.listings[n]), nSize[n]), ton.pages[n], ppi)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "GetBucketVersioning in the window: %d (on), %d (baseline); inventories: %d\n", ton.versioning, toff.versioning, inventories)

	fmt.Fprintln(w, "\nThe extension's own count (gardener_backup_cloud_requests_total, window delta, by operation and code):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "side\toperation/code\trequests\tper hour at default\t")
	for _, s := range sides {
		d := map[string]float64{}
		for _, smp := range s.extAfter {
			if smp.Name == "gardener_backup_cloud_requests_total" {
				d[smp.Labels["operation"]+"/"+smp.Labels["code"]] += smp.Value
			}
		}
		for _, smp := range s.extBefore {
			if smp.Name == "gardener_backup_cloud_requests_total" {
				d[smp.Labels["operation"]+"/"+smp.Labels["code"]] -= smp.Value
			}
		}
		for _, k := range slices.Sorted(maps.Keys(d)) {
			if d[k] != 0 {
				fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f\t\n", s.name, k, d[k], d[k]/hours)
			}
		}
	}
	_ = tw.Flush()
	pages := benchutil.Delta(on.extBefore, on.extAfter, "gardener_backup_entry_inventory_pages_total", "")[""]
	count := benchutil.Delta(on.extBefore, on.extAfter, "gardener_backup_entry_inventory_duration_seconds_count", "")[""]
	if count > 0 {
		fmt.Fprintf(w, "extension: %.0f inventories, %.0f pages (%.2f per inventory, both sizes)\n", count, pages, pages/count)
	}

	fmt.Fprintln(w, "\nKubernetes API writes (watch: MODIFIED events of BackupBuckets and BackupEntries in the window):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\ton\tbaseline\tper resource per hour at default (on - baseline)\t")
	for kind, n := range map[string]int{"BackupBucket": len(on.buckets), "BackupEntry": len(on.entries)} {
		d := on.modified[kind] - off.modified[kind]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\n", kind, on.modified[kind], off.modified[kind], perHour(float64(d), n))
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nThe extension's API requests (rest_client_requests_total, window delta, by method and code):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "method code\ton\tbaseline\ton - baseline, per hour at default\t")
	dOn := restRequests(on)
	dOff := restRequests(off)
	methods := map[string]bool{}
	for k := range dOn {
		methods[k] = true
	}
	for k := range dOff {
		methods[k] = true
	}
	for _, m := range slices.Sorted(maps.Keys(methods)) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.1f\t\n", m, dOn[m], dOff[m], (dOn[m]-dOff[m])/hours)
	}
	_ = tw.Flush()

	var bad []string
	for _, s := range sides {
		if t := s.tally(); t.writes > 0 {
			bad = append(bad, fmt.Sprintf("%s: %d writes to the store in the window (see %s)", s.name, t.writes, s.log.Name()))
		}
	}
	if ton.probes[true]+ton.probes[false] == 0 || inventories == 0 {
		bad = append(bad, "the observed side made no probe or no inventory in the window")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	fmt.Fprintf(w, "\nwrites to the store in the window: 0 on both sides; proxy logs: %s, %s\n", on.log.Name(), off.log.Name())
	return nil
}

// restRequests is the window's delta of rest_client_requests_total by "method code".
func restRequests(s *side) map[string]float64 {
	out := map[string]float64{}
	for _, smp := range s.extAfter {
		if smp.Name == "rest_client_requests_total" {
			out[smp.Labels["method"]+" "+smp.Labels["code"]] += smp.Value
		}
	}
	for _, smp := range s.extBefore {
		if smp.Name == "rest_client_requests_total" {
			out[smp.Labels["method"]+" "+smp.Labels["code"]] -= smp.Value
		}
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}
