// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// Buckets of the cost of a day, all in the first server: the source, and one copy for each way
// of copying (streamed; inside the store by the granted user; by a user without the grant, which
// the engine streams after one refused server-side copy in each pass that holds a snapshot of
// at least replication.DefaultServerSideMinBytes). Smaller snapshots are streamed either way.
const costSrc, costStream, costServer, costRefused = "cost-src", "cost-stream", "cost-server", "cost-refused"

// passesPerDay is how many passes an entry has a day at the default interval (5m).
const passesPerDay = 24 * 60 / 5

// costWay is one way of copying and its destination.
type costWay struct {
	name string
	to   replication.To
}

// costOfADay counts the requests (by store operation and status) and the bytes through this
// process of one entry's passes, as etcd-backup-restore writes an entry by default (a full
// snapshot a day, a delta every 5 minutes) and the entry copy copies it every 5 minutes: the
// first pass of a day's snapshots; a pass with nothing to copy; a pass with one new delta (287 of
// a day's 288 passes) and one with a new full snapshot and a delta (the day's other pass); and
// from these the requests and bytes of 1,000 entries a day, for each way of copying.
func costOfADay(ctx context.Context, sa, su, sn stores) error {
	prefix, err := objectstore.EntryPrefix("shoot--cost--1")
	if err != nil {
		return err
	}
	full, deltaSize := int64(costFullMiB)<<20, int64(costDeltaKiB)<<10
	seq := 0
	write := func(size int64) error {
		seq++
		kind := "Incr"
		if size == full {
			kind = "Full"
		}
		key := fmt.Sprintf("%s%s-%08d-%08d-%d.gz", prefix, "etcd-main/v2/"+kind, 10*seq, 10*seq+9, 1764392400+300*seq)
		return sa.PutObjectStream(objectstore.WithOperation(ctx, objectstore.OpPutObject), costSrc, key, generated(int64(seq), size), size)
	}
	if err := write(full); err != nil {
		return err
	}
	for range costDeltas {
		if err := write(deltaSize); err != nil {
			return err
		}
	}
	ways := []costWay{
		{"streamed", replication.To{Store: su, Bucket: costStream}},
		{"server-side (granted)", replication.To{Store: su, Bucket: costServer, Copier: su.copier}},
		{"server-side offered, not granted (streams)", replication.To{Store: sn, Bucket: costRefused, Copier: sn.copier}},
	}
	type counted struct {
		requests map[string]float64
		bytes    int64
		copied   int
		inside   int
	}
	pass := func(w costWay) (counted, error) {
		before := requestsByCode()
		res, err := replication.Copy(ctx, replication.From{Store: sa, Bucket: costSrc}, w.to, prefix, replication.Options{})
		if err == nil && !res.Done() {
			err = fmt.Errorf("not done: %+v", res)
		}
		// The engine's default rule (replication.DefaultServerSideMinBytes): snapshots below the
		// threshold are streamed, larger ones copied inside where granted.
		if err == nil && w.to.Copier == nil && res.ServerSide > 0 {
			err = fmt.Errorf("%d copied inside the store without a Copier", res.ServerSide)
		}
		// through: read from the source and written to the copy by this process.
		return counted{requests: delta(before, requestsByCode()), bytes: res.StreamedBytes, copied: res.Copied, inside: res.ServerSide}, err
	}
	kinds := []string{"a day's snapshots at once", "nothing to copy", "one new delta", "a new full and a delta"}
	results := map[string]map[string]counted{}
	for _, kind := range kinds {
		switch kind {
		case "one new delta":
			if err := write(deltaSize); err != nil {
				return err
			}
		case "a new full and a delta":
			if err := write(full); err != nil {
				return err
			}
			if err := write(deltaSize); err != nil {
				return err
			}
		}
		results[kind] = map[string]counted{}
		for _, w := range ways {
			c, err := pass(w)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", kind, w.name, err)
			}
			results[kind][w.name] = c
		}
	}
	fmt.Printf("\nThe cost of one entry's passes (one MinIO; a day = 1 full snapshot of %d MiB, %d deltas of %d KiB; a pass every 5 minutes; snapshots below %s streamed, the engine's default):\n\n",
		costFullMiB, costDeltas, costDeltaKiB, formatSize(replication.DefaultServerSideMinBytes))
	fmt.Printf("| pass | way | copied (inside the store) | requests by store operation (status) | bytes through the extension (read + written) |\n|---|---|---|---|---|\n")
	for _, kind := range kinds {
		for _, w := range ways {
			c := results[kind][w.name]
			fmt.Printf("| %s | %s | %d (%d) | %s | %s |\n", kind, w.name, c.copied, c.inside, formatByCode(c.requests), mib(2*c.bytes))
		}
	}
	fmt.Printf("\nPer 1,000 entries a day at the default interval (5m): %d passes an entry, %d of them with one new delta and one with a new full and a delta; and, for entries with nothing new (hibernated shoots), %d passes with nothing to copy:\n\n",
		passesPerDay, passesPerDay-1, passesPerDay)
	fmt.Printf("| way | LIST | GET | PUT (incl. multipart) | COPY (incl. multipart) | other | requests | bytes through the extension | nothing new: requests |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, w := range ways {
		d, f, idle := results["one new delta"][w.name], results["a new full and a delta"][w.name], results["nothing to copy"][w.name]
		day := func(op string) float64 {
			return 1000 * (float64(passesPerDay-1)*sumOp(d.requests, op) + sumOp(f.requests, op))
		}
		total := day(objectstore.OpListObjects) + day(objectstore.OpOpenObject) + day(objectstore.OpPutObject) + day(objectstore.OpCopyObject) + day(objectstore.OpOther)
		bytes := 1000 * (int64(passesPerDay-1)*2*d.bytes + 2*f.bytes)
		idleTotal := 0.0
		for _, v := range idle.requests {
			idleTotal += v
		}
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %s | %.0f |\n", w.name, day(objectstore.OpListObjects), day(objectstore.OpOpenObject),
			day(objectstore.OpPutObject), day(objectstore.OpCopyObject), day(objectstore.OpOther), total, gib(bytes), 1000*passesPerDay*idleTotal)
	}
	return nil
}

// requestsByCode reads the extension's cloud request counter by "<operation> <status code>".
func requestsByCode() map[string]float64 {
	out := map[string]float64{}
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		if !strings.HasSuffix(f.GetName(), "cloud_requests_total") {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["operation"]+" "+labels["code"]] += m.GetCounter().GetValue()
		}
	}
	return out
}

func sumOp(m map[string]float64, op string) float64 {
	n := 0.0
	for k, v := range m {
		if strings.HasPrefix(k, op+" ") {
			n += v
		}
	}
	return n
}

func formatByCode(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %.0f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

func gib(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }
