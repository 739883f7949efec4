// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestCopyGoesOnPastThePassDeadline: a full snapshot of 24 MiB read from MinIO through a proxy
// that trickles GET bodies (a pause of 10 ms every 64 KiB at most: 4 s or more, longer than the pass's 2-second deadline) and written
// to MinIO by the aws provider's multipart upload (16 MiB parts). While the Guard allows it, it
// is copied whole past the deadline (the Guard asked every second and at its end); where the
// Guard refuses, the upload is aborted: no object
// and no multipart upload is left.
func TestCopyGoesOnPastThePassDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const from = "overtime-source"
	key := entry + "/etcd-main/v2/Full-00000000-00000200-1764400000.gz"
	data := bytes.Repeat([]byte("a full snapshot "), (24<<20)/16)
	s3c := second.S3Client()
	for _, b := range []string{from, "overtime-allowed", "overtime-refused"} {
		if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &b}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: new(from), Key: &key, Body: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
	proxy, err := stack.StartTrickle(second.Endpoint, stack.TrickleOptions{Chunk: 64 << 10, Every: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	through := second.SecretData()
	through["endpoint"] = []byte(proxy.URL)
	src, err := (&awsprovider.Provider{}).NewDataPlane(ctx, provider.Credentials{Data: through, Region: second.Region})
	if err != nil {
		t.Fatal(err)
	}
	dst := destination(t, ctx)
	prefix, _ := objectstore.EntryPrefix(entry)
	for _, c := range []struct {
		bucket string
		answer error
	}{
		{"overtime-allowed", nil},
		{"overtime-refused", errors.New("the entry is being deleted")},
	} {
		t.Run(c.bucket, func(t *testing.T) {
			var mu sync.Mutex
			var inFlight []string
			asked := 0
			res, err := replication.Copy(ctx, replication.From{Store: src, Bucket: from}, replication.To{Store: dst, Bucket: c.bucket}, prefix, replication.Options{
				Deadline: 2 * time.Second,
				Guard:    func(context.Context) error { mu.Lock(); asked++; mu.Unlock(); return c.answer },
				Overtime: func(o objectstore.ObjectVersion) { mu.Lock(); inFlight = append(inFlight, o.Key); mu.Unlock() },
			})
			// The Guard is asked at the end and again every Deadline/2 while the write is past the
			// deadline (gateRecheck): at least once.
			if len(inFlight) != 1 || inFlight[0] != key || asked < 1 {
				t.Fatalf("in flight at the deadline %v, the Guard asked %d times; want the snapshot, asked (%+v, %v)", inFlight, asked, res, err)
			}
			got, rerr := objectstore.ReadObject(ctx, dst, c.bucket, key)
			if c.answer == nil {
				if err != nil || res.Copied != 1 || rerr != nil || !bytes.Equal(got, data) {
					t.Fatalf("%+v, %v; the copy holds %d bytes (%v); want the snapshot copied whole", res, err, len(got), rerr)
				}
				return
			}
			if res.Copied != 0 || len(res.Failed) != 1 || !errors.Is(err, replication.ErrCommitRefused) || !errors.Is(rerr, objectstore.ErrNotFound) {
				t.Fatalf("%+v, %v; the copy holds %d bytes (%v); want the snapshot refused, nothing written", res, err, len(got), rerr)
			}
			ups, lerr := s3c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: new(c.bucket)})
			if lerr != nil || len(ups.Uploads) != 0 {
				t.Errorf("multipart uploads left: %+v, %v; want none", ups, lerr)
			}
		})
	}
}
