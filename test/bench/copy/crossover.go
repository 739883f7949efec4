// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// The crossover (--crossover): for snapshots of each size, within the first server, the pass's
// streamed copy beside its server-side copy by the copy's granted user, alternately, rounds
// times; where server-side pays is where replication.DefaultServerSideMinBytes belongs.

const crossStream, crossServer = "crossover-stream", "crossover-server"

var (
	crossoverSizes string
	crossoverOnly  bool
	crossoverRound int
)

// crossoverCount is how many snapshots of size a set holds: 128 MiB of them, at least 4
// (Parallelism) and at most 64.
func crossoverCount(size int64) int { return int(min(64, max(4, (128<<20)/size))) }

// parseSizes reads "256KiB,4MiB" into bytes.
func parseSizes(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		unit := int64(1)
		switch {
		case strings.HasSuffix(f, "KiB"):
			unit, f = 1<<10, strings.TrimSuffix(f, "KiB")
		case strings.HasSuffix(f, "MiB"):
			unit, f = 1<<20, strings.TrimSuffix(f, "MiB")
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--crossover: %q is no size (256KiB, 4MiB)", f)
		}
		out = append(out, n*unit)
	}
	return out, nil
}

func formatSize(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// crossover measures each size's streamed and server-side pass (sa writes the source, su copies
// within the first server) and prints them with the ratio of their rates.
func crossover(ctx context.Context, sa, su stores, parallelism int) error {
	sizes, err := parseSizes(crossoverSizes)
	if err != nil {
		return err
	}
	type result struct {
		stream, server time.Duration
		reqStream      float64
		reqServer      float64
	}
	fmt.Printf("\nCrossover within the first server (%d rounds, alternately; each pass copies the set into a bucket that lacks it):\n\n", crossoverRound)
	results := make([]result, len(sizes))
	for i, size := range sizes {
		n := crossoverCount(size)
		for r := range crossoverRound {
			entry := fmt.Sprintf("shoot--bench--crossover--%d-%d", size, r)
			prefix, err := objectstore.EntryPrefix(entry)
			if err != nil {
				return err
			}
			keys := set{entry: entry, sizes: make([]int64, n)}.keys()
			if err := each(n, parallelism, func(j int) error {
				return sa.PutObjectStream(objectstore.WithOperation(ctx, objectstore.OpPutObject), "src", keys[j], generated(int64(j), size), size)
			}); err != nil {
				return err
			}
			opts := replication.Options{Parallelism: parallelism, ServerSideMinBytes: -1}
			measure := func(to replication.To, server bool) (time.Duration, float64, error) {
				before := requests()
				start := time.Now()
				res, err := replication.Copy(ctx, replication.From{Store: sa, Bucket: "src"}, to, prefix, opts)
				elapsed := time.Since(start)
				switch {
				case err != nil:
				case res.Copied != n || !res.Done():
					err = fmt.Errorf("copied %d of %d", res.Copied, n)
				case server && res.ServerSide != n:
					err = fmt.Errorf("copied %d of %d inside the store (refused: %v)", res.ServerSide, n, res.ServerSideRefused)
				}
				var total float64
				for _, v := range delta(before, requests()) {
					total += v
				}
				return elapsed, total, err
			}
			// Alternately first, so that neither always meets a warmer server.
			order := []bool{r%2 == 0, r%2 != 0}
			for _, server := range order {
				to, bucket := replication.To{Store: su, Bucket: crossStream}, crossStream
				if server {
					to, bucket = replication.To{Store: su, Bucket: crossServer, Copier: su.copier}, crossServer
				}
				d, reqs, err := measure(to, server)
				if err != nil {
					return fmt.Errorf("crossover %s into %s: %w", formatSize(size), bucket, err)
				}
				if server {
					results[i].server += d
					results[i].reqServer += reqs
				} else {
					results[i].stream += d
					results[i].reqStream += reqs
				}
			}
		}
	}
	fmt.Printf("| snapshot size | snapshots per pass | streamed pass | server-side pass | server-side / streamed (rate) | requests per snapshot, streamed / server-side |\n|---|---|---|---|---|---|\n")
	for i, size := range sizes {
		n := crossoverCount(size)
		r := results[i]
		rounds := time.Duration(crossoverRound)
		perSnapshot := float64(n * crossoverRound)
		fmt.Printf("| %s | %d | %s | %s | %.2f | %.1f / %.1f |\n", formatSize(size), n,
			(r.stream / rounds).Round(time.Millisecond), (r.server / rounds).Round(time.Millisecond),
			r.stream.Seconds()/r.server.Seconds(), r.reqStream/perSnapshot, r.reqServer/perSnapshot)
	}
	return nil
}
