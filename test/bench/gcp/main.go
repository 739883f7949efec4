// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command bench measures the deletion of one BackupEntry's prefix on fake-gcs-server (behind the
// GCS stand-in front), in one run, with three strategies side by side, for each prefix size and
// added network delay:
//
//   - engine:   this project's deletion engine (objectstore.DeletePrefix) with every safety check
//     on: prefix validation, per-key prefix check, generation-pinned deletes, every outcome
//     classified, adaptive slow-down under throttling; the listing is streamed;
//   - baseline: today's GCP extension: list the whole prefix into memory, then delete with 10
//     concurrent single deletes;
//   - raw:      the stand-in's raw limit: the listing streamed into as many unchecked concurrent
//     single deletes as the engine may have in flight (results ignored).
//
// All three list the prefix as part of the measured time and are checked afterwards: the prefix
// must be empty and its neighbour intact. The peak live-heap growth of this process (the deleting
// side; the stand-in runs in a child process) is printed for each run: the engine's must not grow
// with the prefix.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/bench/benchutil"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	gcpstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/gcp"
)

const (
	bucket    = "bench"
	entry     = "shoot--bench--entry--1"
	neighbour = "shoot--bench--entry--10/etcd-main/v2/Full-0"
	// engineInFlight is the most deletes the engine has in flight: its parallelism times the
	// store's per-batch concurrency (16); the raw limit gets the same.
	storeBatchConcurrency = 16
	// baselineWorkers is today's extension's concurrency.
	baselineWorkers = 10
)

func main() {
	front := flag.Bool("front", false, "internal: run the stand-in (fake-gcs-server and its front) and print how to reach it")
	sizesFlag := flag.String("objects", "10000,100000", "objects under the entry's prefix, comma-separated (memory is compared across sizes; empty: skip)")
	delaysFlag := flag.String("delays", "0ms,50ms", "added delay per request, comma-separated")
	parallelism := flag.Int("parallelism", 8, "the engine's parallelism (batches in flight)")
	memorySizes := flag.String("memory-objects", "10000,100000,1000000", "prefix sizes of the memory-at-scale comparison on a synthetic store (empty: skip)")
	flag.Parse()
	if *front {
		if err := serveFront(); err != nil {
			fmt.Fprintln(os.Stderr, "front:", err)
			os.Exit(1)
		}
		return
	}
	delays, err := stack.ParseDelays(*delaysFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "--delays:", err)
		os.Exit(2)
	}
	var sizes []int
	if *sizesFlag != "" {
		if sizes, err = benchutil.ParseSizes(*sizesFlag); err != nil {
			fmt.Fprintln(os.Stderr, "--objects:", err)
			os.Exit(2)
		}
	}
	if len(sizes) > 0 {
		if err := run(sizes, delays, *parallelism); err != nil {
			fmt.Fprintln(os.Stderr, "bench failed:", err)
			os.Exit(1)
		}
	}
	if *memorySizes != "" {
		memSizes, err := benchutil.ParseSizes(*memorySizes)
		if err != nil {
			fmt.Fprintln(os.Stderr, "--memory-objects:", err)
			os.Exit(2)
		}
		if err := benchutil.MemoryAtScale(100, *parallelism, memSizes); err != nil {
			fmt.Fprintln(os.Stderr, "bench failed:", err)
			os.Exit(1)
		}
	}
}

func run(sizes []int, delays []time.Duration, parallelism int) error {
	ctx := context.Background()
	inFlight := parallelism * storeBatchConcurrency
	fmt.Printf("bench: deleting %v objects under %s/ on fake-gcs-server, engine parallelism %d (%d deletes in flight), delays %v\n", sizes, entry, parallelism, inFlight, delays)
	// The stand-in runs in a child process, so that this process's heap is the deleting side's
	// alone.
	gcs, stop, err := startFront()
	if err != nil {
		return err
	}
	defer stop()
	secret := gcs.Secret
	direct, err := conformance.NewStores(ctx, &gcpprovider.Provider{}, provider.Credentials{Data: secret}, &gcpapi.BackupBucketConfig{})
	if err != nil {
		return err
	}
	if err := direct.EnsureBucket(ctx, objectstore.Bucket{Name: bucket, Region: "europe-west1"}); err != nil {
		return err
	}
	if err := direct.PutObject(ctx, bucket, neighbour, []byte("keep")); err != nil {
		return err
	}
	prefix, err := objectstore.EntryPrefix(entry)
	if err != nil {
		return err
	}
	at := func(endpoint string) provider.Credentials {
		return provider.Credentials{Data: stack.With(secret, "storageAPIEndpoint", endpoint+"/storage/v1/")}
	}
	// The reference runs first, so that any advantage of a fresh store goes to it, not to us.
	strategies := []benchutil.Strategy{
		{Name: "raw", Run: func(ctx context.Context, endpoint string, _ int) error {
			c, _, err := (&gcpprovider.Provider{}).NewClient(ctx, at(endpoint))
			if err != nil {
				return err
			}
			return rawLimit(ctx, c, prefix.String(), inFlight)
		}},
		{Name: "engine", Run: func(ctx context.Context, endpoint string, objects int) error {
			store, err := (&gcpprovider.Provider{}).NewDataPlane(ctx, at(endpoint))
			if err != nil {
				return err
			}
			res, err := objectstore.DeletePrefix(ctx, store, bucket, prefix, objectstore.DeleteOptions{Parallelism: parallelism})
			if err == nil && (!res.Done || res.Deleted != objects) {
				err = fmt.Errorf("engine result %+v", res)
			}
			return err
		}},
		{Name: "baseline", Run: func(ctx context.Context, endpoint string, _ int) error {
			c, _, err := (&gcpprovider.Provider{}).NewClient(ctx, at(endpoint))
			if err != nil {
				return err
			}
			return baseline(ctx, c, prefix.String())
		}},
	}
	var results []benchutil.Result
	for _, delay := range delays {
		proxy, err := stack.StartProxy(gcs.URL, stack.ProxyOptions{Delay: delay})
		if err != nil {
			return err
		}
		for _, objects := range sizes {
			keys := make([]string, objects)
			for i := range keys {
				keys[i] = fmt.Sprintf("%setcd-main/v2/Full-%08d", prefix.String(), i)
			}
			for _, s := range strategies {
				r, err := benchutil.RunOne(ctx, direct, bucket, keys, neighbour, s, proxy.URL, delay)
				if err != nil {
					return err
				}
				results = append(results, r)
			}
		}
		proxy.Close()
	}
	benchutil.PrintTable(os.Stdout, results)
	return nil
}

// front is how to reach the stand-in of the child process.
type front struct {
	URL    string
	Secret map[string][]byte
}

// serveFront runs the stand-in, prints a front as JSON and serves until stdin closes.
func serveFront() error {
	gcs, err := gcpstack.StartGCS(gcpstack.GCSOptions{Filesystem: true, Unrecorded: true})
	if err != nil {
		return err
	}
	defer gcs.Stop()
	if err := json.NewEncoder(os.Stdout).Encode(front{URL: gcs.URL, Secret: gcs.SecretData()}); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

func startFront() (*front, func(), error) {
	cmd := exec.Command(os.Args[0], "--front")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() { _ = stdin.Close(); _ = cmd.Wait() }
	f := &front{}
	if err := json.NewDecoder(stdout).Decode(f); err != nil {
		stop()
		return nil, nil, fmt.Errorf("starting the stand-in: %w", err)
	}
	return f, stop, nil
}

// baseline is today's GCP extension: the whole listing in memory, then 10 concurrent deletes
// of the live objects (which the SDK does not retry).
func baseline(ctx context.Context, c *storage.Client, prefix string) error {
	var names []string
	it := c.Bucket(bucket).Objects(ctx, &storage.Query{Prefix: prefix})
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return err
		}
		names = append(names, a.Name)
	}
	return concurrently(ctx, c, names, baselineWorkers)
}

// rawLimit streams the listing into unchecked concurrent single deletes of the listed
// generations: the very request the engine sends (the stand-in's cost depends on the request's
// form), without any of the engine's checks, batching or back-off.
func rawLimit(ctx context.Context, c *storage.Client, prefix string, workers int) error {
	q := &storage.Query{Prefix: prefix, Versions: true}
	if err := q.SetAttrSelection([]string{"Name", "Generation"}); err != nil {
		return err
	}
	type object struct {
		name string
		gen  int64
	}
	objects := make(chan object, 1000)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for o := range objects {
				_ = c.Bucket(bucket).Object(o.name).Generation(o.gen).Delete(ctx)
			}
		})
	}
	var err error
	it := c.Bucket(bucket).Objects(ctx, q)
	for {
		a, ierr := it.Next()
		if errors.Is(ierr, iterator.Done) {
			break
		}
		if ierr != nil {
			err = ierr
			break
		}
		objects <- object{a.Name, a.Generation}
	}
	close(objects)
	wg.Wait()
	return err
}

func concurrently(ctx context.Context, c *storage.Client, names []string, workers int) error {
	next := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for n := range next {
				if err := c.Bucket(bucket).Object(n).Delete(ctx); err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for _, n := range names {
		next <- n
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}
