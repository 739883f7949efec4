// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command entrycredentials measures issuing and revoking per-entry credentials, by each issuer
// side by side in one run: MinIO (service accounts through MinIO's admin API) and IAM (the IAM
// stand-in test/stack/aws.IAM, its keys and policies enforced on MinIO: a user per entry). N
// entries of one bucket each get a credential (IssueEntryCredential: the revocation of
// unrecorded ones, the principal, the proof by listing and GetBucketVersioning), by --workers at
// a time (the chart's concurrentSyncs), then each gets a new one with the first in use, then the
// new one is retired for an hour (RetireEntryCredentials: a migration away), then every one of
// the entry's is revoked (RevokeEntryCredentials). A counting proxy in front of MinIO counts the issuer's
// requests to it by kind (admin API, S3: the proof); the IAM stand-in records every IAM request
// by action (its own mirroring onto MinIO goes around the proxy and is not counted). Run with
// `make bench-entrycredentials` (BENCH_FLAGS=--issuers=MinIO for one).
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
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
	issuers := flag.String("issuers", awsapi.IssuerMinIO+","+awsapi.IssuerIAM, "the entry issuers to measure, one after the other: MinIO, IAM (the stand-in enforced on MinIO)")
	flag.Parse()
	for _, issuer := range strings.Split(*issuers, ",") {
		if err := run(issuer, *n, *workers); err != nil {
			fmt.Fprintln(os.Stderr, issuer+":", err)
			os.Exit(1)
		}
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

// run measures the entry issuer named issuer on a MinIO of its own.
func run(issuer string, n, workers int) error {
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
	prov := &awsprovider.Provider{}
	// iamRequests counts the IAM requests since its last call, by action (none for MinIO).
	iamRequests := func() map[string]int { return nil }
	switch issuer {
	case awsapi.IssuerMinIO:
	case awsapi.IssuerIAM:
		stand := awsstack.StartIAM()
		defer stand.Close()
		if err := stand.EnforceOn(minio); err != nil {
			return err
		}
		prov.IAMEndpoint = stand.URL
		seen := 0
		iamRequests = func() map[string]int {
			actions := stand.Actions()
			byAction := map[string]int{}
			for _, a := range actions[seen:] {
				byAction[a]++
			}
			seen = len(actions)
			return byAction
		}
	default:
		return fmt.Errorf("unknown issuer %q (MinIO or IAM)", issuer)
	}
	iss, err := prov.NewEntryIssuer(ctx, provider.Credentials{Data: data, Region: "eu-central-1"}, &awsapi.BackupBucketConfig{}, issuer)
	if err != nil {
		return err
	}
	iamRequests() // none counted before the first phase
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
		fmt.Printf("%-5s %-22s %4d entries, %d workers: %6.1fs total, %5.1f/s; per entry p50 %v p90 %v max %v; requests per entry: admin %.1f, S3 %.1f%s\n",
			issuer, name, n, workers, total.Seconds(), float64(n)/total.Seconds(), pct(0.5), pct(0.9), pct(1), float64(admin)/float64(n), float64(s3)/float64(n), perEntry(iamRequests(), n))
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
	if err := phase("retire (migrated away)", func(p objectstore.Prefix) error {
		id, _ := ids.Load(p.String())
		return iss.RetireEntryCredentials(ctx, bucket, p, objectstore.EntryReadWrite, []string{id.(string)}, time.Now().Add(time.Hour))
	}); err != nil {
		return err
	}
	return phase("revoke", func(p objectstore.Prefix) error {
		return iss.RevokeEntryCredentials(ctx, bucket, p, objectstore.EntryReadWrite, nil)
	})
}

// perEntry is the IAM requests of a phase per entry, by action ("" without any).
func perEntry(byAction map[string]int, n int) string {
	if len(byAction) == 0 {
		return ""
	}
	total, parts := 0, []string{}
	for _, a := range slices.Sorted(maps.Keys(byAction)) {
		total += byAction[a]
		parts = append(parts, fmt.Sprintf("%s %.1f", a, float64(byAction[a])/float64(n)))
	}
	return fmt.Sprintf(", IAM %.1f (%s)", float64(total)/float64(n), strings.Join(parts, ", "))
}

func stringPtr(s string) *string { return &s }
