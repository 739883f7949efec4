// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command bench measures the deletion of one BackupEntry's prefix on Azurite, in one run, with
// three strategies side by side, for each prefix size and added network delay:
//
//   - engine:   this project's deletion engine (objectstore.DeletePrefix) with every safety check
//     on: prefix validation, per-key prefix check, every Blob Batch sub-response classified,
//     adaptive slow-down under throttling; the listing is streamed;
//   - baseline: today's Azure extension: list a page, then one Delete per blob, sequentially;
//   - raw:      the stand-in's raw limit: the listing streamed into as many unchecked concurrent
//     Blob Batch requests of 256 deletes as the engine may have in flight (results ignored).
//
// All three list the prefix as part of the measured time and are checked afterwards: the prefix
// must be empty and its neighbour intact. --strategies repeats them in any order (raw,engine,
// raw,engine,...: the table then adds each one's median and spread); every pass prints what it
// sent through the proxy (listing pages and their include=, Blob Batch requests and their sizes,
// the time the store took to answer each kind). --standin go runs the project's Go Blob stand-in
// (test/stack/azure.BlobStandIn, which plays Blob Batch) instead of Azurite.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/bench/benchutil"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

const (
	bucket    = "bench"
	entry     = "shoot--bench--entry--1"
	neighbour = "shoot--bench--entry--10/etcd-main/v2/Full-0"
	batchSize = 256
)

func main() {
	sizesFlag := flag.String("objects", "10000", "blobs under the entry's prefix, comma-separated (Azurite's cost per delete grows with the blobs it holds: 10,000 take about a minute, 30,000 over ten)")
	sample := flag.Int("baseline-sample", 5000, "blobs the sequential baseline deletes (its rate does not depend on the size; 100,000 at 50 ms would take 90 minutes); 0: all")
	delaysFlag := flag.String("delays", "0ms,50ms", "added delay per request, comma-separated")
	parallelism := flag.Int("parallelism", 8, "batches in flight for the engine and the raw limit")
	order := flag.String("strategies", "raw,engine,baseline", "strategies in order (raw, raw-include, engine, baseline), comma-separated; repeat them for medians")
	standin := flag.String("standin", "azurite", "the blob store: azurite, or go (the project's Go Blob stand-in)")
	flag.Parse()
	delays, err := stack.ParseDelays(*delaysFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "--delays:", err)
		os.Exit(2)
	}
	sizes, err := benchutil.ParseSizes(*sizesFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "--objects:", err)
		os.Exit(2)
	}
	if err := run(sizes, delays, *parallelism, *sample, strings.Split(*order, ","), *standin); err != nil {
		fmt.Fprintln(os.Stderr, "bench failed:", err)
		os.Exit(1)
	}
}

func run(sizes []int, delays []time.Duration, parallelism, sample int, order []string, standin string) error {
	ctx := context.Background()
	fmt.Printf("bench: deleting %v blobs under %s/ on %s, parallelism %d, delays %v, strategies %v\n", sizes, entry, standin, parallelism, delays, order)
	var secret map[string][]byte
	var target string
	switch standin {
	case "azurite":
		azurite, err := azurestack.StartAzurite()
		if err != nil {
			return err
		}
		defer azurite.Stop()
		secret, target = azurite.SecretData(), "http://"+azurite.Host
	case "go":
		blobs := azurestack.StartBlobStandIn()
		defer blobs.Close()
		secret, target = blobs.SecretData(), blobs.URL
	default:
		return fmt.Errorf("--standin %q: want azurite or go", standin)
	}
	// Azurite serves one request at a time: a listing page queued behind batches in flight can
	// wait longer than the product's 60 s request timeout, which is Azurite's limit, not Azure's.
	p := &azureprovider.Provider{RequestTimeout: 10 * time.Minute}
	direct, err := conformance.NewStores(ctx, p, provider.Credentials{Data: secret}, &azureapi.BackupBucketConfig{})
	if err != nil {
		return err
	}
	if err := direct.EnsureBucket(ctx, objectstore.Bucket{Name: bucket}); err != nil {
		return err
	}
	if err := direct.PutObject(ctx, bucket, neighbour, []byte("keep")); err != nil {
		return err
	}
	prefix, err := objectstore.EntryPrefix(entry)
	if err != nil {
		return err
	}
	at := func(host string) provider.Credentials {
		return provider.Credentials{Data: stack.With(secret, "domain", host)}
	}
	strategies := map[string]benchutil.Strategy{
		"raw": {Name: "raw", Run: func(ctx context.Context, host string, _ int) error {
			c, err := p.NewClient(at(host))
			if err != nil {
				return err
			}
			return rawLimit(ctx, c, prefix.String(), parallelism, nil)
		}},
		// raw-include is raw listing as the engine does (snapshots, versions and immutability
		// policies): whether asking for them costs the store anything.
		"raw-include": {Name: "raw-include", Run: func(ctx context.Context, host string, _ int) error {
			c, err := p.NewClient(at(host))
			if err != nil {
				return err
			}
			return rawLimit(ctx, c, prefix.String(), parallelism, &container.ListBlobsInclude{Snapshots: true, Versions: true, ImmutabilityPolicy: true})
		}},
		"engine": {Name: "engine", Run: func(ctx context.Context, host string, objects int) error {
			store, err := p.NewDataPlane(ctx, at(host))
			if err != nil {
				return err
			}
			res, err := objectstore.DeletePrefix(ctx, store, bucket, prefix, objectstore.DeleteOptions{Parallelism: parallelism})
			if err == nil && (!res.Done || res.Deleted != objects) {
				err = fmt.Errorf("engine result %+v", res)
			}
			return err
		}},
		"baseline": {Name: "baseline", Sample: sample, Run: func(ctx context.Context, host string, _ int) error {
			c, err := p.NewClient(at(host))
			if err != nil {
				return err
			}
			return baseline(ctx, c, prefix.String())
		}},
	}
	for _, name := range order {
		if _, ok := strategies[name]; !ok {
			return fmt.Errorf("unknown strategy %q", name)
		}
	}
	var results []benchutil.Result
	for _, delay := range delays {
		timing := &timedProxy{started: map[*http.Request]time.Time{}}
		proxy, err := stack.StartProxy(target, stack.ProxyOptions{Delay: delay, BeforeRequest: timing.before, OnRequest: timing.after, OnError: timing.failure})
		if err != nil {
			return err
		}
		host := strings.TrimPrefix(proxy.URL, "http://")
		for _, objects := range sizes {
			keys := make([]string, objects)
			for i := range keys {
				keys[i] = fmt.Sprintf("%setcd-main/v2/Full-%08d", prefix.String(), i)
			}
			for _, name := range order {
				s := strategies[name]
				counted := timing.pass()
				r, err := benchutil.RunOne(ctx, direct, bucket, keys, neighbour, withCount(s, timing), host, delay)
				if err != nil {
					return err
				}
				fmt.Printf("    on the wire: %s\n", counted)
				results = append(results, r)
			}
		}
		proxy.Close()
	}
	benchutil.PrintTable(os.Stdout, results)
	printMedians(results)
	return nil
}

// withCount restarts the pass's counter when s starts deleting, so that the untimed writes
// before it (which go to the store directly anyway) and nothing else are left out.
func withCount(s benchutil.Strategy, t *timedProxy) benchutil.Strategy {
	run := s.Run
	s.Run = func(ctx context.Context, host string, objects int) error {
		t.mu.Lock()
		if t.current != nil {
			t.current.started = time.Now()
		}
		t.mu.Unlock()
		return run(ctx, host, objects)
	}
	return s
}

// printMedians prints, for every size, delay and strategy run more than once, the median rate,
// the spread of the passes, and the median's share of raw's median in the same run.
func printMedians(results []benchutil.Result) {
	type key struct {
		size     int
		delay    time.Duration
		strategy string
	}
	rates := map[key][]float64{}
	var keys []key
	for _, r := range results {
		k := key{r.Size, r.Delay, r.Strategy}
		if rates[k] == nil {
			keys = append(keys, k)
		}
		rates[k] = append(rates[k], float64(r.Objects)/r.Seconds)
	}
	fmt.Printf("\n| blobs | added delay | strategy | passes | median blobs/s | spread (blobs/s) | median's share of raw's median |\n|---|---|---|---|---|---|---|\n")
	for _, k := range keys {
		xs := rates[k]
		share := "-"
		if raw := rates[key{k.size, k.delay, "raw"}]; raw != nil {
			share = fmt.Sprintf("%.0f %%", 100*median(xs)/median(raw))
		}
		fmt.Printf("| %d | %s | %s | %d | %.0f | %.0f-%.0f | %s |\n", k.size, k.delay, k.strategy, len(xs), median(xs), slices.Min(xs), slices.Max(xs), share)
	}
}

// baseline is today's Azure extension: page by page, one Delete per blob, sequentially.
func baseline(ctx context.Context, c *azblob.Client, prefix string) error {
	cc := c.ServiceClient().NewContainerClient(bucket)
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, b := range page.Segment.BlobItems {
			if _, err := cc.NewBlobClient(*b.Name).Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// rawLimit streams the listing into unchecked concurrent Blob Batch requests of 256 deletes.
func rawLimit(ctx context.Context, c *azblob.Client, prefix string, workers int, include *container.ListBlobsInclude) error {
	cc := c.ServiceClient().NewContainerClient(bucket)
	batches := make(chan []string, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for names := range batches {
				bb, err := cc.NewBatchBuilder()
				if err != nil {
					continue
				}
				for _, n := range names {
					_ = bb.Delete(n, &container.BatchDeleteOptions{DeleteOptions: blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}})
				}
				_, _ = cc.SubmitBatch(ctx, bb, nil)
			}
		})
	}
	var err error
	pending := make([]string, 0, batchSize)
	opts := &container.ListBlobsFlatOptions{Prefix: &prefix, MaxResults: to.Ptr(int32(5000))}
	if include != nil {
		opts.Include = *include
	}
	pager := cc.NewListBlobsFlatPager(opts)
	for pager.More() {
		page, perr := pager.NextPage(ctx)
		if perr != nil {
			err = perr
			break
		}
		for _, b := range page.Segment.BlobItems {
			pending = append(pending, *b.Name)
			if len(pending) == batchSize {
				batches <- pending
				pending = make([]string, 0, batchSize)
			}
		}
	}
	if len(pending) > 0 {
		batches <- pending
	}
	close(batches)
	wg.Wait()
	return err
}
