// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command entrycredentials measures issuing and revoking per-entry credentials on MinIO: N
// entries of one bucket each get a service account (IssueEntryCredential: the revocation of
// unrecorded ones, the parent user, the service account, the proof by listing and
// GetBucketVersioning), by --workers at a time (the chart's concurrentSyncs), then each is
// revoked (RevokeEntryCredentials). A counting proxy in front of MinIO counts the requests by
// kind (admin API, S3). Run with `make bench-entrycredentials`.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

func main() {
	n := flag.Int("entries", 200, "entries whose credentials are issued")
	workers := flag.Int("workers", 5, "issuances at a time (the chart's concurrentSyncs)")
	flag.Parse()
	if err := run(*n, *workers); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// counter is a reverse proxy that counts requests by kind.
type counter struct {
	admin, s3 atomic.Int64
	proxy     *httputil.ReverseProxy
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/minio/admin/") {
		c.admin.Add(1)
	} else {
		c.s3.Add(1)
	}
	c.proxy.ServeHTTP(w, r)
}

func (c *counter) take() (admin, s3 int64) { return c.admin.Swap(0), c.s3.Swap(0) }

func run(n, workers int) error {
	ctx := context.Background()
	minio, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: "eu-central-1"})
	if err != nil {
		return err
	}
	defer minio.Stop()
	target, _ := url.Parse(minio.Endpoint)
	c := &counter{proxy: httputil.NewSingleHostReverseProxy(target)}
	front := httptest.NewServer(c)
	defer front.Close()
	const bucket = "entrycredentials"
	if _, err := minio.S3Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: stringPtr(bucket), CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: "eu-central-1"}}); err != nil {
		return err
	}
	data := minio.SecretData()
	data["endpoint"] = []byte(front.URL)
	iss, err := (&awsprovider.Provider{}).NewEntryIssuer(ctx, provider.Credentials{Data: data, Region: "eu-central-1"}, &awsapi.BackupBucketConfig{}, awsapi.IssuerMinIO)
	if err != nil {
		return err
	}
	prefixes := make([]objectstore.Prefix, n)
	for i := range prefixes {
		if prefixes[i], err = objectstore.EntryPrefix(fmt.Sprintf("shoot--bench--s%d--%08d-0000-0000-0000-000000000000", i, i)); err != nil {
			return err
		}
	}
	phase := func(name string, do func(objectstore.Prefix) error) error {
		var mu sync.Mutex
		var durations []time.Duration
		var firstErr error
		work := make(chan objectstore.Prefix)
		var wg sync.WaitGroup
		began := time.Now()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for p := range work {
					t0 := time.Now()
					err := do(p)
					mu.Lock()
					durations = append(durations, time.Since(t0))
					if err != nil && firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}()
		}
		for _, p := range prefixes {
			work <- p
		}
		close(work)
		wg.Wait()
		total := time.Since(began)
		if firstErr != nil {
			return fmt.Errorf("%s: %w", name, firstErr)
		}
		admin, s3 := c.take()
		slices.Sort(durations)
		pct := func(q float64) time.Duration {
			return durations[int(q*float64(len(durations)-1))].Round(time.Millisecond)
		}
		fmt.Printf("%-22s %4d entries, %d workers: %6.1fs total, %5.1f/s; per entry p50 %v p90 %v max %v; requests per entry: admin %.1f, S3 %.1f\n",
			name, n, workers, total.Seconds(), float64(n)/total.Seconds(), pct(0.5), pct(0.9), pct(1), float64(admin)/float64(n), float64(s3)/float64(n))
		return nil
	}
	ids := sync.Map{}
	if err := phase("issue (first)", func(p objectstore.Prefix) error {
		cred, err := iss.IssueEntryCredential(ctx, bucket, p, objectstore.EntryReadWrite, nil)
		ids.Store(p.String(), cred.ID)
		return err
	}); err != nil {
		return err
	}
	if err := phase("issue (replacing one)", func(p objectstore.Prefix) error {
		id, _ := ids.Load(p.String())
		cred, err := iss.IssueEntryCredential(ctx, bucket, p, objectstore.EntryReadWrite, []string{id.(string)})
		ids.Store(p.String(), cred.ID)
		return err
	}); err != nil {
		return err
	}
	return phase("revoke", func(p objectstore.Prefix) error {
		return iss.RevokeEntryCredentials(ctx, bucket, p, objectstore.EntryReadWrite, nil)
	})
}

func stringPtr(s string) *string { return &s }
