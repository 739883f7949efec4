// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// s3Operation names the S3 operation of a request as the counting proxy sees it.
func s3Operation(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case q.Has("versioning"):
		return "GetBucketVersioning"
	case q.Has("object-lock"):
		return "GetObjectLockConfiguration"
	case q.Has("versions"):
		return "ListObjectVersions"
	case q.Get("list-type") == "2":
		return "ListObjectsV2"
	case q.Has("delete"):
		return "DeleteObjects"
	case q.Has("tagging"):
		return r.Method + "ObjectTagging"
	case q.Has("lifecycle"):
		return r.Method + "BucketLifecycle"
	}
	return r.Method + " other"
}

// TestListingIsOneRequestPerPage: an inventory's listing (a new store each time, as every
// reconcile builds one) costs one request per page of 1,000 and nothing else on a bucket that was
// never versioned, and one Object Lock lookup more per store on a versioned one; every object
// and version is listed, and a deletion through the same listing empties the prefix.
func TestListingIsOneRequestPerPage(t *testing.T) {
	ctx := context.Background()
	proxy, err := stack.StartCountingProxy(minio.Endpoint, s3Operation)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	through := func() conformance.Stores { return newStore(t, withData(minio.SecretData(), "endpoint", proxy.URL)) }

	for _, versioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("versioned=%t", versioned), func(t *testing.T) {
			name := newBucketName()
			if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
				t.Fatal(err)
			}
			if versioned {
				if _, err := minio.S3Client().PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &name,
					VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
					t.Fatal(err)
				}
			}
			var keys []string
			for i := range 1500 {
				keys = append(keys, fmt.Sprintf("shoot--a--b--1/etcd-main/v2/Full-%04d", i))
			}
			keys = append(keys, "shoot--a--b--10/etcd-main/v2/Full-0000")
			if err := conformance.PutMany(ctx, newStore(t, minio.SecretData()), name, keys); err != nil {
				t.Fatal(err)
			}
			proxy.Reset()
			for range 2 { // two inventories
				n := 0
				if err := through().ListObjects(ctx, name, "shoot--a--b--1/", func(page []objectstore.ObjectVersion) error {
					n += len(page)
					return nil
				}); err != nil || n != 1500 {
					t.Fatalf("listed %d, %v; want 1500", n, err)
				}
			}
			want := map[string]int{"ListObjectVersions": 4} // 2 pages each
			if versioned {
				want["GetObjectLockConfiguration"] = 2 // once per store
			}
			if got := proxy.String(); got != fmt.Sprint(want) {
				t.Fatalf("two listings of 1,500 objects sent %s; want %s", got, fmt.Sprint(want))
			}
			prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
			res, err := objectstore.DeletePrefix(ctx, through(), name, prefix, objectstore.DeleteOptions{})
			if err != nil || !res.Done || res.Deleted != 1500 {
				t.Fatalf("deletion: %+v, %v; want all 1500 deleted", res, err)
			}
			left, err := conformance.ListKeys(ctx, newStore(t, minio.SecretData()), name, "")
			if err != nil || len(left) != 1 || left[0] != "shoot--a--b--10/etcd-main/v2/Full-0000" {
				t.Fatalf("left %v, %v; want only the neighbour", left, err)
			}
		})
	}
}
