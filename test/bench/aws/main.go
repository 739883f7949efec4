// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command bench measures the deletion of one BackupEntry's prefix on MinIO, in one run, with
// three strategies side by side, each at several added network delays:
//
//   - engine:   this project's deletion engine (objectstore.DeletePrefix) with every safety check
//     on: prefix validation, per-key prefix check, versioning check, every per-key error checked,
//     adaptive slow-down under throttling;
//   - baseline: today's extensions' strategy: list a page, one DeleteObjects for it, sequentially;
//   - raw:      the stand-in's raw limit: the listing streamed into unchecked parallel
//     DeleteObjects (quiet, results ignored).
//
// All three list the prefix as part of the measured time (a deletion cannot skip it) and are
// checked afterwards: the prefix must be empty and its neighbour intact. A second table breaks
// the engine's run down: the requests of its deletion, and its verifying listing (the pass that
// lists the prefix again and finds it empty before Done), timed and counted inside the same run.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

const (
	bucket    = "bench"
	entry     = "shoot--bench--entry--1"
	neighbour = "shoot--bench--entry--10/etcd-main/v2/Full-0"
)

func main() {
	objects := flag.Int("objects", 100_000, "objects under the entry's prefix")
	delaysFlag := flag.String("delays", "0ms,50ms", "added delay per request, comma-separated")
	parallelism := flag.Int("parallelism", 8, "requests in flight for the engine and the raw limit")
	flag.Parse()
	delays, err := stack.ParseDelays(*delaysFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "--delays:", err)
		os.Exit(2)
	}
	if err := run(*objects, delays, *parallelism); err != nil {
		fmt.Fprintln(os.Stderr, "bench failed:", err)
		os.Exit(1)
	}
}

type strategy struct {
	name string
	run  func(ctx context.Context, endpoint string) error
}

type result struct {
	delay    time.Duration
	strategy string
	seconds  float64
	// The engine's run only: its requests by kind, and its listings after the first (the
	// verifying listing, one unless a listing showed objects already deleted).
	listRequests, deleteRequests int64
	verifying                    []listCall
}

// requestCounts counts the requests the proxy answered, by kind.
type requestCounts struct{ lists, deletes atomic.Int64 }

// count is the proxy's OnRequest: an S3 listing is a GET with list-type or versions in its
// query, a batch deletion a POST with delete.
func (c *requestCounts) count(r *http.Request, _ int) {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodGet && (q.Has("list-type") || q.Has("versions")):
		c.lists.Add(1)
	case r.Method == http.MethodPost && q.Has("delete"):
		c.deletes.Add(1)
	}
}

// listCall is one ListObjects call of the engine: its time (the first pass's includes the
// deletion it feeds), its listing requests and the versions it listed.
type listCall struct {
	seconds  float64
	requests int64
	versions int
}

// timedLists is the engine's store with every ListObjects call timed and counted; DeletePrefix
// lists once per pass, one pass after the other.
type timedLists struct {
	conformance.Stores

	counts *requestCounts
	calls  []listCall
}

func (s *timedLists) ListObjects(ctx context.Context, bucket, prefix string, fn func([]objectstore.ObjectVersion) error) error {
	before, start, n := s.counts.lists.Load(), time.Now(), 0
	err := s.Stores.ListObjects(ctx, bucket, prefix, func(page []objectstore.ObjectVersion) error {
		n += len(page)
		return fn(page)
	})
	s.calls = append(s.calls, listCall{time.Since(start).Seconds(), s.counts.lists.Load() - before, n})
	return err
}

func run(objects int, delays []time.Duration, parallelism int) error {
	ctx := context.Background()
	fmt.Printf("bench: deleting %d objects under %s/ on MinIO, parallelism %d, delays %v\n", objects, entry, parallelism, delays)
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
	prefix, err := objectstore.EntryPrefix(entry)
	if err != nil {
		return err
	}
	counts := &requestCounts{}
	var engineLists *timedLists // the engine's last run
	// The reference runs first, so that any advantage of a fresh store goes to it, not to us.
	strategies := []strategy{
		{"raw", func(ctx context.Context, endpoint string) error {
			c, err := s3Client(minio, endpoint)
			if err != nil {
				return err
			}
			return rawLimit(ctx, c, prefix.String(), parallelism)
		}},
		{"engine", func(ctx context.Context, endpoint string) error {
			store, err := newStore(minio, endpoint)
			if err != nil {
				return err
			}
			engineLists = &timedLists{Stores: store, counts: counts}
			res, err := objectstore.DeletePrefix(ctx, engineLists, bucket, prefix, objectstore.DeleteOptions{Parallelism: parallelism})
			if err == nil && (!res.Done || res.Deleted != objects) {
				err = fmt.Errorf("engine result %+v", res)
			}
			return err
		}},
		{"baseline", func(ctx context.Context, endpoint string) error {
			c, err := s3Client(minio, endpoint)
			if err != nil {
				return err
			}
			return baseline(ctx, c, prefix.String())
		}},
	}
	keys := make([]string, objects)
	for i := range keys {
		keys[i] = fmt.Sprintf("%setcd-main/v2/Full-%08d", prefix.String(), i)
	}
	if err := direct.PutObject(ctx, bucket, neighbour, []byte("keep")); err != nil {
		return err
	}
	var results []result
	for _, delay := range delays {
		proxy, err := stack.StartProxy(minio.Endpoint, stack.ProxyOptions{Delay: delay, OnRequest: counts.count})
		if err != nil {
			return err
		}
		for _, s := range strategies {
			fmt.Printf("  delay %-5s %-8s: writing %d objects ...", delay, s.name, objects)
			start := time.Now()
			if err := putMany(ctx, direct, keys); err != nil {
				return err
			}
			fmt.Printf(" (%s) deleting ...", time.Since(start).Round(time.Second))
			lists, deletes := counts.lists.Load(), counts.deletes.Load()
			start = time.Now()
			if err := s.run(ctx, proxy.URL); err != nil {
				return fmt.Errorf("%s at %s: %w", s.name, delay, err)
			}
			secs := time.Since(start).Seconds()
			left, err := conformance.ListKeys(ctx, direct, bucket, "")
			if err != nil {
				return err
			}
			if len(left) != 1 || left[0] != neighbour {
				return fmt.Errorf("%s at %s left %d objects (want only the neighbour)", s.name, delay, len(left))
			}
			fmt.Printf(" %.1f s, %.0f objects/s\n", secs, float64(objects)/secs)
			r := result{delay: delay, strategy: s.name, seconds: secs, listRequests: counts.lists.Load() - lists, deleteRequests: counts.deletes.Load() - deletes}
			if s.name == "engine" {
				if len(engineLists.calls) < 2 || engineLists.calls[len(engineLists.calls)-1].versions != 0 {
					return fmt.Errorf("engine at %s listed %+v; want a last, verifying listing that found nothing", delay, engineLists.calls)
				}
				r.verifying = engineLists.calls[1:]
			}
			results = append(results, r)
		}
		proxy.Close()
	}
	fmt.Printf("\n| added delay | strategy | seconds | objects/s | share of raw limit |\n|---|---|---|---|---|\n")
	for _, r := range results {
		var raw float64
		for _, o := range results {
			if o.delay == r.delay && o.strategy == "raw" {
				raw = o.seconds
			}
		}
		fmt.Printf("| %s | %s | %.1f | %.0f | %.0f %% |\n", r.delay, r.strategy, r.seconds, float64(objects)/r.seconds, 100*raw/r.seconds)
	}
	fmt.Printf("\n| added delay | engine: seconds | list / delete requests | verifying listing: listings | its list requests | its seconds | its share of the engine's time |\n|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		if r.strategy != "engine" {
			continue
		}
		var requests int64
		var secs float64
		for _, c := range r.verifying {
			requests += c.requests
			secs += c.seconds
		}
		fmt.Printf("| %s | %.1f | %d / %d | %d | %d | %.3f | %.2f %% |\n", r.delay, r.seconds, r.listRequests, r.deleteRequests, len(r.verifying), requests, secs, 100*secs/r.seconds)
	}
	return nil
}

func creds(m *awsstack.MinIO, endpoint string) provider.Credentials {
	data := m.SecretData()
	data["endpoint"] = []byte(endpoint)
	return provider.Credentials{Data: data}
}

func newStore(m *awsstack.MinIO, endpoint string) (conformance.Stores, error) {
	return conformance.NewStores(context.Background(), &awsprovider.Provider{}, creds(m, endpoint), &awsapi.BackupBucketConfig{})
}

// s3Client is the very client the engine's store uses (same transport, retries, checksums).
func s3Client(m *awsstack.MinIO, endpoint string) (*s3.Client, error) {
	return (&awsprovider.Provider{}).NewS3Client(creds(m, endpoint))
}

// putMany writes keys with 48 writers; the first error stops the feeding (workers keep draining,
// so that nothing blocks) and is returned.
func putMany(ctx context.Context, store objectstore.Writer, keys []string) error {
	const workers = 48
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	next := make(chan string)
	for range workers {
		wg.Go(func() {
			for k := range next {
				if err := store.PutObject(ctx, bucket, k, []byte("snapshot")); err != nil {
					cancel(err)
				}
			}
		})
	}
	for _, k := range keys {
		if ctx.Err() != nil {
			break
		}
		next <- k
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && err != context.Canceled {
		return err
	}
	return nil
}

// baseline is today's extensions' strategy: a page, one DeleteObjects for it, sequentially.
func baseline(ctx context.Context, c *s3.Client, prefix string) error {
	pages := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, len(page.Contents))
		for i, o := range page.Contents {
			ids[i] = types.ObjectIdentifier{Key: o.Key}
		}
		if _, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}}); err != nil {
			return err
		}
	}
	return nil
}

// rawLimit streams the listing into unchecked parallel DeleteObjects.
func rawLimit(ctx context.Context, c *s3.Client, prefix string, parallelism int) error {
	batches := make(chan []types.ObjectIdentifier, parallelism)
	var wg sync.WaitGroup
	for range parallelism {
		wg.Go(func() {
			for ids := range batches {
				_, _ = c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
			}
		})
	}
	pages := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: &prefix})
	var err error
	for pages.HasMorePages() {
		page, perr := pages.NextPage(ctx)
		if perr != nil {
			err = perr
			break
		}
		ids := make([]types.ObjectIdentifier, len(page.Contents))
		for i, o := range page.Contents {
			ids[i] = types.ObjectIdentifier{Key: o.Key}
		}
		if len(ids) > 0 {
			batches <- ids
		}
	}
	close(batches)
	wg.Wait()
	return err
}
