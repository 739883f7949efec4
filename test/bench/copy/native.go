// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"crypto/md5" //nolint:gosec // S3's Content-MD5 header, no security
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/madmin-go/v3"
	"github.com/minio/minio-go/v7/pkg/credentials"

	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// native is MinIO's bucket replication from a bucket of one server to a bucket of the other,
// set up through MinIO's own APIs (no mc): the remote target with the admin API
// (madmin.SetRemoteTarget, admin/v3/set-remote-target: the source server keeps the
// destination's credentials), the rule with S3's PutBucketReplication carrying MinIO's
// DeleteReplication element (which the SDK's types lack, so the request is signed here). The
// source server reaches the destination through a proxy that counts its requests.
type native struct {
	a, b     *awsstack.MinIO
	src, dst string
	proxy    *httptest.Server
	mu       sync.Mutex
	counted  map[string]int
}

// startNative creates versioned buckets src on a and dst on b (MinIO replicates only between
// versioned buckets) and replicates src to dst, deletions not replicated (as this extension's
// copy never deletes).
func startNative(ctx context.Context, a, b *awsstack.MinIO, src, dst string) (*native, error) {
	n := &native{a: a, b: b, src: src, dst: dst, counted: map[string]int{}}
	for _, c := range []struct {
		m      *awsstack.MinIO
		bucket string
	}{{a, src}, {b, dst}} {
		cl := c.m.S3Client()
		if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &c.bucket}); err != nil {
			return nil, fmt.Errorf("creating bucket %s: %w", c.bucket, err)
		}
		if _, err := cl.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &c.bucket,
			VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
			return nil, fmt.Errorf("versioning bucket %s: %w", c.bucket, err)
		}
	}
	target, err := url.Parse(b.Endpoint)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	n.proxy = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.count(r)
		rp.ServeHTTP(w, r)
	}))
	aURL, err := url.Parse(a.Endpoint)
	if err != nil {
		return nil, err
	}
	adm, err := madmin.NewWithOptions(aURL.Host, &madmin.Options{Creds: credentials.NewStaticV4(a.AccessKey, a.SecretKey, "")})
	if err != nil {
		return nil, err
	}
	arn, err := adm.SetRemoteTarget(ctx, src, &madmin.BucketTarget{
		SourceBucket: src, TargetBucket: dst, Endpoint: strings.TrimPrefix(n.proxy.URL, "http://"),
		Credentials: &madmin.Credentials{AccessKey: b.AccessKey, SecretKey: b.SecretKey},
		Type:        madmin.ReplicationService, Region: b.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("admin/v3/set-remote-target on %s: %w", a.Endpoint, err)
	}
	rule := fmt.Sprintf(`<ReplicationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ID>bench</ID><Status>Enabled</Status><Priority>1</Priority>`+
		`<DeleteMarkerReplication><Status>Disabled</Status></DeleteMarkerReplication><DeleteReplication><Status>Disabled</Status></DeleteReplication>`+
		`<Filter><Prefix></Prefix></Filter><Destination><Bucket>%s</Bucket></Destination></Rule></ReplicationConfiguration>`, arn)
	if err := signed(ctx, a, http.MethodPut, "/"+src+"?replication=", []byte(rule)); err != nil {
		return nil, fmt.Errorf("PutBucketReplication on %s: %w", src, err)
	}
	n.reset()
	return n, nil
}

func (n *native) stop() { n.proxy.Close() }

// count records one request of the source server to the destination by method and kind.
func (n *native) count(r *http.Request) {
	kind := r.Method
	switch q := r.URL.Query(); {
	case q.Has("uploadId") && q.Has("partNumber"):
		kind += " part"
	case q.Has("uploads") || q.Has("uploadId"):
		kind += " multipart"
	case strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0:
		kind += " bucket"
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.counted[kind]++
}

func (n *native) reset() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.counted
	n.counted = map[string]int{}
	return out
}

func formatCounted(m map[string]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// waitFor polls the destination's listing under prefix until it holds every key with its size,
// and returns when that was first seen (polled every 100 ms, so up to 100 ms late).
func (n *native) waitFor(ctx context.Context, prefix string, want map[string]int64, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for {
		have := 0
		pages := s3.NewListObjectsV2Paginator(n.b.S3Client(), &s3.ListObjectsV2Input{Bucket: &n.dst, Prefix: &prefix})
		for pages.HasMorePages() {
			out, err := pages.NextPage(ctx)
			if err != nil {
				return time.Time{}, err
			}
			for _, o := range out.Contents {
				if size, ok := want[aws.ToString(o.Key)]; ok && size == aws.ToInt64(o.Size) {
					have++
				}
			}
		}
		if have == len(want) {
			return time.Now(), nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("after %s the destination holds %d of %d objects", limit, have, len(want))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// versions counts the versions and delete markers of key in the destination.
func (n *native) versions(ctx context.Context, key string) (versions, markers int, err error) {
	out, err := n.b.S3Client().ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &n.dst, Prefix: &key})
	if err != nil {
		return 0, 0, err
	}
	return len(out.Versions), len(out.DeleteMarkers), nil
}

// signed sends one S3 request with body to m, signed with its root credentials, and fails on
// any status but 2xx.
func signed(ctx context.Context, m *awsstack.MinIO, method, path string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, m.Endpoint+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	sum := md5.Sum(body) //nolint:gosec // see the import
	req.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	hash := sha256.Sum256(body)
	payload := hex.EncodeToString(hash[:])
	req.Header.Set("X-Amz-Content-Sha256", payload)
	if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: m.AccessKey, SecretAccessKey: m.SecretKey}, req, payload, "s3", m.Region, time.Now()); err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", resp.Status, answer)
	}
	return nil
}

// nativeLimits shows what MinIO's replication does with a key written twice and with the two
// deletions a store sees (a plain delete, as an operator's; a delete of a version by its ID, as
// etcd-backup-restore's garbage collection), and what it tells of its progress per object.
func nativeLimits(ctx context.Context, n *native) error {
	fmt.Printf("\nMinIO bucket replication (deletions not replicated, as configured), besides copying:\n")
	key := "shoot--bench--native--1/etcd-main/v2/Full-00000000-00000010-1764392400.gz"
	a := n.a.S3Client()
	for _, data := range []string{"first", "second"} {
		if _, err := a.PutObject(ctx, &s3.PutObjectInput{Bucket: &n.src, Key: &key, Body: strings.NewReader(data)}); err != nil {
			return err
		}
	}
	if _, err := n.waitFor(ctx, key, map[string]int64{key: int64(len("second"))}, time.Minute); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // both versions' replication, if it replicates both
	v, m, err := n.versions(ctx, key)
	if err != nil {
		return err
	}
	fmt.Printf("- a key written twice on the source (2 versions): the destination holds %d versions, %d delete markers\n", v, m)
	head, err := a.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &n.src, Key: &key})
	if err != nil {
		return err
	}
	fmt.Printf("- what the source tells of one object's replication: x-amz-replication-status %q (per object; no per-prefix lag)\n", head.ReplicationStatus)
	if _, err := a.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &n.src, Key: &key}); err != nil {
		return err
	}
	out, err := a.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &n.src, Prefix: &key})
	if err != nil {
		return err
	}
	for _, ver := range out.Versions {
		if _, err := a.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &n.src, Key: &key, VersionId: ver.VersionId}); err != nil {
			return err
		}
	}
	time.Sleep(3 * time.Second)
	if v, m, err = n.versions(ctx, key); err != nil {
		return err
	}
	fmt.Printf("- the key deleted on the source (a delete marker, then every version by its ID; 3 s later): the destination holds %d versions, %d delete markers\n", v, m)
	fmt.Printf("- requests of the source server to the destination meanwhile: %s\n", formatCounted(n.reset()))
	return nil
}
