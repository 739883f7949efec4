// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Command handback measures the aws hand-back (providerConfig handBack: true) on MinIO on a bucket
// of many object versions, one entry's prefix of them deferred, the old way beside the new in one
// run:
//
//   - scan (60d9b50): the hand-back as it was until issue 36: before writing the incumbent's
//     lifecycle it listed every version of the bucket and read the tags of each
//     (GetObjectTagging, 16 at a time), adding the incumbent's tag to the versions that carried
//     only ours. Its scan is reproduced here (markOursForIncumbent at 60d9b50,
//     pkg/provider/aws/takeover.go:116-151), followed by today's hand-back reconcile, which is
//     what the rest of that reconcile was;
//   - no scan (now): today's hand-back reconcile (EnsureBucket with handBack): the deferral
//     already marked every version it deferred in the incumbent's form, so the hand-back writes
//     the lifecycle and reads it back.
//
// Both run through a counting proxy; afterwards the lifecycle must be exactly the incumbent's and
// every deferred version must carry its tag. Timings are printed, not asserted.
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
	bucket   = "bench-handback"
	deferred = "shoot--bench--gone"
)

func main() {
	versions := flag.Int("versions", 100_000, "object versions in the bucket")
	entries := flag.Int("entries", 100, "entry prefixes they are spread over; the first one's versions are deferred")
	flag.Parse()
	if err := run(*versions, *entries); err != nil {
		fmt.Fprintln(os.Stderr, "bench failed:", err)
		os.Exit(1)
	}
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:min(3, len(strings.Fields(string(b))))], " ")
}

func run(versions, entries int) error {
	ctx := context.Background()
	fmt.Printf("bench-handback: %d object versions over %d entries, one entry deferred; load average %s\n", versions, entries, loadavg())
	minio, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{})
	if err != nil {
		return err
	}
	defer minio.Stop()
	var requests sync.Map // operation -> *atomic.Int64
	proxy, err := stack.StartProxy(minio.Endpoint, stack.ProxyOptions{OnRequest: func(r *http.Request, _ int) {
		n, _ := requests.LoadOrStore(operation(r), new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
	}})
	if err != nil {
		return err
	}
	defer proxy.Close()
	direct, err := stores(minio, minio.Endpoint, minioConfig(false))
	if err != nil {
		return err
	}
	if err := direct.EnsureBucket(ctx, objectstore.Bucket{Name: bucket}); err != nil {
		return err
	}
	raw := minio.S3Client()
	if _, err := raw.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		return err
	}
	keys := make([]string, versions)
	for i := range keys {
		e := fmt.Sprintf("shoot--bench--e%04d", i%entries)
		if i%entries == 0 {
			e = deferred
		}
		keys[i] = fmt.Sprintf("%s/etcd-main/v2/Incr-%08d", e, i)
	}
	start := time.Now()
	fmt.Printf("  writing %d versions ...", versions)
	if err := conformance.PutMany(ctx, direct, bucket, keys); err != nil {
		return err
	}
	fmt.Printf(" %s\n", time.Since(start).Round(time.Second))
	start = time.Now()
	if _, err := direct.DeferDeletion(ctx, bucket, deferred+"/"); err != nil {
		return err
	}
	fmt.Printf("  deferring %s/ (%d versions, both tags) ... %s\n", deferred, (versions+entries-1)/entries, time.Since(start).Round(time.Second))

	through, err := stores(minio, proxy.URL, minioConfig(true))
	if err != nil {
		return err
	}
	client, err := (&awsprovider.Provider{}).NewS3Client(creds(minio, proxy.URL))
	if err != nil {
		return err
	}
	type result struct {
		name     string
		seconds  float64
		requests map[string]int64
	}
	var results []result
	for _, way := range []struct {
		name string
		run  func() error
	}{
		{"scan (60d9b50)", func() error {
			if err := markOursForIncumbent(ctx, client, bucket); err != nil {
				return err
			}
			return through.EnsureBucket(ctx, objectstore.Bucket{Name: bucket})
		}},
		{"no scan (now)", func() error { return through.EnsureBucket(ctx, objectstore.Bucket{Name: bucket}) }},
	} {
		// Each starts from the bucket as this extension keeps it (its own rules).
		if err := direct.EnsureBucket(ctx, objectstore.Bucket{Name: bucket}); err != nil {
			return err
		}
		requests.Clear()
		fmt.Printf("  %-15s: handing back ...", way.name)
		start := time.Now()
		if err := way.run(); err != nil {
			return fmt.Errorf("%s: %w", way.name, err)
		}
		secs := time.Since(start).Seconds()
		counts := map[string]int64{}
		requests.Range(func(k, v any) bool { counts[k.(string)] = v.(*atomic.Int64).Load(); return true })
		fmt.Printf(" %.2f s, requests %v\n", secs, counts)
		if err := check(ctx, raw, versions, entries); err != nil {
			return fmt.Errorf("%s: %w", way.name, err)
		}
		results = append(results, result{way.name, secs, counts})
	}
	total := func(m map[string]int64) (n int64) {
		for _, v := range m {
			n += v
		}
		return n
	}
	fmt.Printf("\n| versions | hand-back | seconds | requests | of them object-tagging |\n|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Printf("| %d | %s | %.2f | %d | %d |\n", versions, r.name, r.seconds, total(r.requests), r.requests["GET tagging"]+r.requests["PUT tagging"])
	}
	fmt.Printf("\nratio scan / no scan: %.0fx; load average at the end %s\n", results[0].seconds/results[1].seconds, loadavg())
	return nil
}

// check verifies what a hand-back must leave: exactly the incumbent's lifecycle, and the
// incumbent's tag on every deferred version (a sample of the deferred prefix: all of it).
func check(ctx context.Context, raw *s3.Client, versions, entries int) error {
	lc, err := raw.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(bucket)})
	if err != nil {
		return err
	}
	var ids []string
	for _, r := range lc.Rules {
		if id := aws.ToString(r.ID); id == awsprovider.IncumbentDeferralRule || id == awsprovider.IncumbentDeleteMarkersRule {
			ids = append(ids, id)
		} else if r.AbortIncompleteMultipartUpload == nil {
			return fmt.Errorf("lifecycle holds rule %q besides the incumbent's", id)
		}
	}
	if len(ids) != 2 {
		return fmt.Errorf("lifecycle rules %v; want the incumbent's two", ids)
	}
	pages := s3.NewListObjectVersionsPaginator(raw, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(deferred + "/")})
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, v := range page.Versions {
			tags, err := raw.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: v.Key, VersionId: v.VersionId})
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(tags.TagSet, func(t types.Tag) bool {
				return aws.ToString(t.Key) == awsprovider.IncumbentDeferralTag && aws.ToString(t.Value) == "true"
			}) {
				return fmt.Errorf("deferred version %s %s lacks %s=true", aws.ToString(v.Key), aws.ToString(v.VersionId), awsprovider.IncumbentDeferralTag)
			}
			n++
		}
	}
	if want := (versions + entries - 1) / entries; n != want {
		return fmt.Errorf("%d deferred versions; want %d", n, want)
	}
	return nil
}

// markOursForIncumbent is the scan the hand-back ran until issue 36 (60d9b50,
// pkg/provider/aws/takeover.go:116-151 with tagVersionIf of deferral.go): every version of the
// bucket listed, its tags read, and the incumbent's tag added where only ours was.
func markOursForIncumbent(ctx context.Context, c *s3.Client, bucket string) error {
	has := func(tags []types.Tag, key string) bool {
		return slices.ContainsFunc(tags, func(t types.Tag) bool { return aws.ToString(t.Key) == key && aws.ToString(t.Value) == "true" })
	}
	pages := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: &bucket})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		versions := make([]objectstore.ObjectVersion, 0, len(out.Versions))
		for _, v := range out.Versions {
			versions = append(versions, objectstore.ObjectVersion{Key: aws.ToString(v.Key), Version: aws.ToString(v.VersionId)})
		}
		failed := objectstore.ForEachObject(ctx, versions, 16, func(ctx context.Context, o objectstore.ObjectVersion) error {
			got, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &bucket, Key: aws.String(o.Key), VersionId: aws.String(o.Version)})
			if err != nil {
				return err
			}
			if !has(got.TagSet, awsprovider.DeferredDeletionTag) || has(got.TagSet, awsprovider.IncumbentDeferralTag) {
				return nil
			}
			tags := append(slices.Clone(got.TagSet), types.Tag{Key: aws.String(awsprovider.IncumbentDeferralTag), Value: aws.String("true")})
			_, err = c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: &bucket, Key: aws.String(o.Key), VersionId: aws.String(o.Version), Tagging: &types.Tagging{TagSet: tags}})
			return err
		})
		if len(failed) > 0 {
			return fmt.Errorf("%d object versions, first %q: %w", len(failed), failed[0].Object.Key, failed[0].Err)
		}
	}
	return nil
}

// operation names a request as "METHOD subresource" (tagging, lifecycle, versions, ...).
func operation(r *http.Request) string {
	for _, sub := range []string{"tagging", "lifecycle", "versions", "versioning", "object-lock", "encryption", "policy", "publicAccessBlock", "location", "delete"} {
		if r.URL.Query().Has(sub) {
			return r.Method + " " + sub
		}
	}
	return r.Method + " other"
}

// minioConfig leaves out the two settings MinIO does not implement (as the tests' minioConfig).
func minioConfig(handBack bool) *awsapi.BackupBucketConfig {
	return &awsapi.BackupBucketConfig{HandBack: handBack,
		DisabledSettings: []awsapi.Setting{awsapi.SettingPublicAccessBlock, awsapi.SettingMultipartAbortLifecycle}}
}

func creds(m *awsstack.MinIO, endpoint string) provider.Credentials {
	data := m.SecretData()
	data["endpoint"] = []byte(endpoint)
	return provider.Credentials{Data: data}
}

func stores(m *awsstack.MinIO, endpoint string, cfg *awsapi.BackupBucketConfig) (conformance.Stores, error) {
	return conformance.NewStores(context.Background(), &awsprovider.Provider{}, creds(m, endpoint), cfg)
}
