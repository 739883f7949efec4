// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// request is one request the proxy answered in the window, as the S3 (or MinIO admin) API
// names it.
type request struct {
	method, op, bucket, prefix string
	// firstPage is a listing without a continuation token or marker: the start of a listing.
	firstPage bool
	write     bool
	status    int
}

// classify names an S3 request of path style (or a call of MinIO's admin API).
func classify(r *http.Request, status int) request {
	q := r.URL.Query()
	out := request{method: r.Method, status: status,
		write: r.Method != http.MethodGet && r.Method != http.MethodHead}
	if strings.HasPrefix(r.URL.Path, "/minio/") {
		out.op = "MinIO admin " + strings.TrimPrefix(r.URL.Path, "/minio/admin/v3/")
		return out
	}
	bucketName, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	out.bucket = bucketName
	var keys []string
	for k := range q {
		if !strings.HasPrefix(strings.ToLower(k), "x-amz-") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	switch {
	case r.Method == http.MethodGet && key == "" && q.Get("list-type") == "2":
		out.op, out.prefix = "ListObjectsV2", q.Get("prefix")
		out.firstPage = q.Get("continuation-token") == "" && q.Get("start-after") == ""
		if q.Get("max-keys") == "1" && out.prefix == "" {
			out.op = "ListObjectsV2 max-keys=1"
		}
	case r.Method == http.MethodGet && key == "" && q.Has("versions"):
		out.op, out.prefix = "ListObjectVersions", q.Get("prefix")
		out.firstPage = q.Get("key-marker") == "" && q.Get("version-id-marker") == ""
	case r.Method == http.MethodGet && key == "" && q.Has("versioning"):
		out.op = "GetBucketVersioning"
	case r.Method == http.MethodGet && key == "" && len(keys) == 0:
		out.op, out.prefix, out.firstPage = "ListObjects", q.Get("prefix"), q.Get("marker") == ""
	case r.Method == http.MethodHead && key == "":
		out.op = "HeadBucket"
	case r.Method == http.MethodHead:
		out.op = "HeadObject"
	case key == "":
		out.op = r.Method + " bucket ?" + strings.Join(keys, "&")
	default:
		out.op = r.Method + " object"
		if len(keys) > 0 {
			out.op += " ?" + strings.Join(keys, "&")
		}
	}
	return out
}

// listing reports whether r is a page of a listing of a prefix (an inventory's).
func (r request) listing() bool {
	return r.prefix != "" && (r.op == "ListObjectsV2" || r.op == "ListObjectVersions" || r.op == "ListObjects")
}

func (s *side) record(r *http.Request, status int) {
	req := classify(r, status)
	s.mu.Lock()
	defer s.mu.Unlock()
	mark := " "
	if s.measuring {
		s.reqs = append(s.reqs, req)
		mark = "W"
	}
	fmt.Fprintf(s.log, "%s %s %d %-6s %s %s?%s\n", time.Now().UTC().Format("15:04:05.000"), mark, status, r.Method, req.op, r.URL.Path, r.URL.RawQuery)
}

// snapshotKeys are an entry's objects named as etcd-backup-restore names them: a full snapshot a
// day and a delta snapshot every 5 minutes in between, the newest delta a minute ago.
func snapshotKeys(entryName string, n int, now time.Time) []string {
	const delta, full = 5 * time.Minute, 24 * time.Hour
	var keys []string
	rev := int64(1_000_000)
	t := now.Add(-time.Minute)
	for i := 0; i < n; i++ {
		kind := "Incr"
		if t.Truncate(full) != t.Add(-delta).Truncate(full) || i == n-1 {
			kind = "Full" // the first snapshot after midnight, and the oldest kept
		}
		if kind == "Full" {
			keys = append(keys, fmt.Sprintf("%s/etcd-main/v2/Full-%08d-%08d-%d", entryName, 0, rev, t.Unix()))
		} else {
			keys = append(keys, fmt.Sprintf("%s/etcd-main/v2/Incr-%08d-%08d-%d", entryName, rev-100, rev, t.Unix()))
		}
		rev -= 100
		t = t.Add(-delta)
	}
	return keys
}

// writeSnapshots writes every side's entries' objects directly to MinIO (not through the
// proxies).
func writeSnapshots(ctx context.Context, c config, minio *awsstack.MinIO, sides []*side) error {
	store, err := (&awsprovider.Provider{}).NewWriter(ctx, provider.Credentials{Region: minio.Region, Data: map[string][]byte{
		"accessKeyID": []byte(minio.AccessKey), "secretAccessKey": []byte(minio.SecretKey),
		"endpoint": []byte(minio.Endpoint), "s3ForcePathStyle": []byte("true"),
	}})
	if err != nil {
		return err
	}
	type put struct{ bucket, key string }
	var puts []put
	now := time.Now()
	for _, s := range sides {
		for _, e := range plan(c, s.buckets) {
			for _, k := range snapshotKeys(e.name, e.objects, now) {
				puts = append(puts, put{e.bucket, k})
			}
		}
	}
	progress("writing %d snapshot objects directly to MinIO", len(puts))
	start := time.Now()
	work := make(chan put)
	errs := make(chan error, 64)
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for p := range work {
				if err := store.PutObject(ctx, p.bucket, p.key, []byte("snapshot "+p.key)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i, p := range puts {
		select {
		case work <- p:
		case err := <-errs:
			close(work)
			return err
		}
		if i > 0 && i%20000 == 0 {
			progress("  %d objects written", i)
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	progress("%d objects written in %s", len(puts), time.Since(start).Round(time.Second))
	return nil
}
