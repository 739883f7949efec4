// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/bench/benchutil"
)

// directStore is MinIO without the proxy: what the benchmark writes and checks there is neither
// counted nor logged as the extension's.
func (b *bench) directStore(ctx context.Context) (conformance.Stores, error) {
	return conformance.NewStores(ctx, &awsprovider.Provider{}, provider.Credentials{Region: b.minio.Region, Data: map[string][]byte{
		"accessKeyID": []byte(b.minio.AccessKey), "secretAccessKey": []byte(b.minio.SecretKey),
		"endpoint": []byte(b.minio.Endpoint), "s3ForcePathStyle": []byte("true"),
	}}, &awsapi.BackupBucketConfig{})
}

// seedBody is every seeded object's content: the benchmark measures object counts, not bytes.
var seedBody = []byte("x")

// seed writes total objects named key(i) straight to MinIO on --seed-workers writers, with a
// progress line (written, rate, ETA) every 10 s.
func (b *bench) seed(ctx context.Context, what string, total int, key func(int) string) error {
	var next, written atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t0 := time.Now()
	cpu0 := seedCPU()
	for range b.c.seedWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= total || ctx.Err() != nil {
					return
				}
				if err := b.direct.PutObject(ctx, bucketName, key(i), seedBody); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					cancel()
					return
				}
				written.Add(1)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case <-done:
			n := written.Load()
			dt := time.Since(t0).Seconds()
			cpu := seedCPU()
			progress("  %s: %d written in %.1f s (%.0f objects/s, %d writers); CPU meanwhile: minio %.0f%%, benchmark %.0f%% of one core",
				what, n, dt, float64(n)/dt, b.c.seedWorkers, 100*(cpu[0]-cpu0[0])/dt, 100*(cpu[1]-cpu0[1])/dt)
			return first
		case <-time.After(10 * time.Second):
			n := written.Load()
			rate := float64(n) / time.Since(t0).Seconds()
			eta := time.Duration(float64(total-int(n)) / max(rate, 1) * float64(time.Second))
			progress("  %s: %d of %d written (%.0f objects/s, ETA %s)", what, n, total, rate, eta.Round(time.Second))
		}
	}
}

// seedCPU returns the CPU seconds of MinIO and of the benchmark so far (what bounds seeding).
func seedCPU() [2]float64 {
	var out [2]float64
	if pid, ok := benchutil.Children(os.Getpid())["minio"]; ok {
		if p, err := benchutil.ReadProc(pid); err == nil {
			out[0] = p.CPUSeconds
		}
	}
	if p, err := benchutil.ReadProc(os.Getpid()); err == nil {
		out[1] = p.CPUSeconds
	}
	return out
}
