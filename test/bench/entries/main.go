// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command entries measures the deletion of many small BackupEntries at once on MinIO, in one
// run, side by side with the stand-in's raw limit for the same shape of work:
//
//   - raw:    the N prefixes listed by --syncs listers, every page streamed into --parallelism
//     unchecked DeleteObjects in flight (quiet, results ignored): the raw run's parallelism;
//   - raw-split: the same with each page split into --parallelism requests (the engine's batches
//     for a short prefix), to tell the store's cost per request from the engine's;
//   - engine: --syncs workers (the controller's concurrent reconciles), each deleting one entry
//     at a time with objectstore.DeletePrefix and the options the BackupEntry delegate uses
//     (controller.DeletionOptions, and the process-wide budget per bucket), every pass until Done.
//
// Each strategy gets freshly written entries (untimed); afterwards every deleted prefix must be
// empty and the neighbour intact. Run with `make bench-entries`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	controller "github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const (
	bucket    = "bench"
	neighbour = "shoot--bench--keep/etcd-main/v2/Full-0"
)

type options struct {
	entries, objects, parallelism, syncs, rawBatch int
	delay                                          time.Duration
	order                                          []string
}

func main() {
	var o options
	flag.IntVar(&o.entries, "entries", 100, "entries deleted at once")
	flag.IntVar(&o.objects, "objects", 1000, "objects per entry")
	flag.IntVar(&o.parallelism, "parallelism", 8, "the engine's deletion parallelism (the chart's default) and the raw run's requests in flight")
	flag.IntVar(&o.syncs, "syncs", 5, "entries deleted at a time (the chart's concurrentSyncs)")
	flag.IntVar(&o.rawBatch, "raw-batch", 0, "keys per raw DeleteObjects (0: a listing page)")
	flag.DurationVar(&o.delay, "delay", 0, "added delay per request (a proxy in front of MinIO)")
	order := flag.String("strategies", "raw,engine", "strategies in order (raw, engine), comma-separated")
	flag.Parse()
	o.order = strings.Split(*order, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench failed:", err)
		os.Exit(1)
	}
}

func entryName(i int) string { return fmt.Sprintf("shoot--bench--e%04d", i) }

func run(o options) error {
	ctx := context.Background()
	fmt.Printf("bench-entries: %d entries x %d objects on MinIO, %d at a time, parallelism %d, delay %s\n", o.entries, o.objects, o.syncs, o.parallelism, o.delay)
	minio, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{WithoutKMS: true})
	if err != nil {
		return err
	}
	defer minio.Stop()
	direct, err := newStore(minio, minio.Endpoint)
	if err != nil {
		return err
	}
	if _, err := minio.S3Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return err
	}
	if err := direct.PutObject(ctx, bucket, neighbour, []byte("keep")); err != nil {
		return err
	}
	proxy, err := stack.StartProxy(minio.Endpoint, stack.ProxyOptions{Delay: o.delay})
	if err != nil {
		return err
	}
	defer proxy.Close()
	var keys []string
	for e := range o.entries {
		for i := range o.objects {
			keys = append(keys, fmt.Sprintf("%s/etcd-main/v2/Full-%08d", entryName(e), i))
		}
	}
	total := len(keys)
	type result struct {
		name string
		secs float64
	}
	var results []result
	for _, name := range o.order {
		fmt.Printf("  %-7s: writing %d objects ...", name, total)
		start := time.Now()
		if err := conformance.PutMany(ctx, direct, bucket, keys); err != nil {
			return err
		}
		fmt.Printf(" (%s) deleting ...", time.Since(start).Round(time.Second))
		start = time.Now()
		switch name {
		case "raw":
			err = raw(ctx, minio, proxy.URL, o, false)
		case "raw-split":
			err = raw(ctx, minio, proxy.URL, o, true)
		case "engine":
			err = engine(ctx, minio, proxy.URL, o)
		default:
			err = fmt.Errorf("unknown strategy %q", name)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		secs := time.Since(start).Seconds()
		left, err := conformance.ListKeys(ctx, direct, bucket, "")
		if err != nil {
			return err
		}
		if len(left) != 1 || left[0] != neighbour {
			return fmt.Errorf("%s left %d objects (want only the neighbour)", name, len(left))
		}
		fmt.Printf(" %.1f s, %.0f objects/s\n", secs, float64(total)/secs)
		results = append(results, result{name, secs})
	}
	// The raw limit is the fastest raw pass of the run (of either batch shape).
	var rawSecs float64
	for _, r := range results {
		if strings.HasPrefix(r.name, "raw") && (rawSecs == 0 || r.secs < rawSecs) {
			rawSecs = r.secs
		}
	}
	fmt.Printf("\n| entries x objects | strategy | seconds | objects/s | share of the raw limit (fastest raw pass) |\n|---|---|---|---|---|\n")
	for _, r := range results {
		share := "-"
		if rawSecs > 0 {
			share = fmt.Sprintf("%.0f %%", 100*rawSecs/r.secs)
		}
		fmt.Printf("| %d x %d | %s | %.1f | %.0f | %s |\n", o.entries, o.objects, r.name, r.secs, float64(total)/r.secs, share)
	}
	// Repeated strategies (interleaved with --strategies raw,engine,raw,engine,...): the median of
	// each, and its share of the best raw median, so that a load spike in one pass does not decide.
	byName := map[string][]float64{}
	var names []string
	for _, r := range results {
		if byName[r.name] == nil {
			names = append(names, r.name)
		}
		byName[r.name] = append(byName[r.name], r.secs)
	}
	medians := map[string]float64{}
	var rawMedian float64
	for _, n := range names {
		medians[n] = median(byName[n])
		if strings.HasPrefix(n, "raw") && (rawMedian == 0 || medians[n] < rawMedian) {
			rawMedian = medians[n]
		}
	}
	fmt.Printf("\n| strategy | passes | median seconds | median objects/s | share of the best raw median |\n|---|---|---|---|---|\n")
	for _, n := range names {
		fmt.Printf("| %s | %d | %.1f | %.0f | %.0f %% |\n", n, len(byName[n]), medians[n], float64(total)/medians[n], 100*rawMedian/medians[n])
	}
	return nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// engine deletes the entries o.syncs at a time, each with the delegate's options, pass after
// pass until Done, as the controller's requeues do.
func engine(ctx context.Context, m *awsstack.MinIO, endpoint string, o options) error {
	store, err := newStore(m, endpoint)
	if err != nil {
		return err
	}
	return forEach(o.entries, o.syncs, func(e int) error {
		prefix, err := objectstore.EntryPrefix(entryName(e))
		if err != nil {
			return err
		}
		for pass := 0; ; pass++ {
			opts := controller.DeletionOptions{Parallelism: o.parallelism}.DeleteOptions(ctx)
			opts.Budget = objectstore.SharedBudget(backupentry.BudgetKey("aws", "", bucket), o.parallelism)
			res, err := objectstore.DeletePrefix(ctx, store, bucket, prefix, opts)
			if err != nil {
				return err
			}
			if res.Done {
				return nil
			}
			if pass > 10 {
				return fmt.Errorf("%s not done after %d passes: %+v", prefix, pass, res)
			}
		}
	})
}

// raw lists the prefixes o.syncs at a time and streams every page into o.parallelism unchecked
// DeleteObjects in flight: a page per request, or (split) each page in o.parallelism requests,
// the batches the engine sends for a short prefix.
func raw(ctx context.Context, m *awsstack.MinIO, endpoint string, o options, split bool) error {
	c, err := (&awsprovider.Provider{}).NewS3Client(creds(m, endpoint))
	if err != nil {
		return err
	}
	batches := make(chan []types.ObjectIdentifier, o.parallelism)
	var deleters sync.WaitGroup
	for range o.parallelism {
		deleters.Go(func() {
			for ids := range batches {
				_, _ = c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
			}
		})
	}
	err = forEach(o.entries, o.syncs, func(e int) error {
		pages := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(entryName(e) + "/")})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return err
			}
			ids := make([]types.ObjectIdentifier, len(page.Contents))
			for i, obj := range page.Contents {
				ids[i] = types.ObjectIdentifier{Key: obj.Key}
			}
			size := len(ids)
			switch {
			case o.rawBatch > 0:
				size = o.rawBatch
			case split:
				size = max(1, (len(ids)+o.parallelism-1)/o.parallelism)
			}
			for len(ids) > 0 {
				n := min(size, len(ids))
				batches <- ids[:n]
				ids = ids[n:]
			}
		}
		return nil
	})
	close(batches)
	deleters.Wait()
	return err
}

// forEach runs fn for 0..n-1, at most workers at a time, in order; the first error is returned.
func forEach(n, workers int, fn func(int) error) error {
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

func creds(m *awsstack.MinIO, endpoint string) provider.Credentials {
	data := m.SecretData()
	data["endpoint"] = []byte(endpoint)
	return provider.Credentials{Data: data}
}

func newStore(m *awsstack.MinIO, endpoint string) (conformance.Stores, error) {
	return conformance.NewStores(context.Background(), &awsprovider.Provider{}, creds(m, endpoint), &awsapi.BackupBucketConfig{})
}
