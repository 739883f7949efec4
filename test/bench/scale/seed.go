package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
)

// directStore is MinIO without the proxy: what the benchmark writes and checks there is neither
// counted nor logged as the extension's.
func (b *bench) directStore(ctx context.Context) (objectstore.Store, error) {
	return (&awsprovider.Provider{}).NewStore(ctx, provider.Credentials{Region: b.minio.Region, Data: map[string][]byte{
		"accessKeyID": []byte(b.minio.AccessKey), "secretAccessKey": []byte(b.minio.SecretKey),
		"endpoint": []byte(b.minio.Endpoint), "s3ForcePathStyle": []byte("true"),
	}}, nil)
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
			progress("  %s: %d written in %.1f s (%.0f objects/s, %d writers)", what, n, time.Since(t0).Seconds(), float64(n)/time.Since(t0).Seconds(), b.c.seedWorkers)
			return first
		case <-time.After(10 * time.Second):
			n := written.Load()
			rate := float64(n) / time.Since(t0).Seconds()
			eta := time.Duration(float64(total-int(n)) / max(rate, 1) * float64(time.Second))
			progress("  %s: %d of %d written (%.0f objects/s, ETA %s)", what, n, total, rate, eta.Round(time.Second))
		}
	}
}
