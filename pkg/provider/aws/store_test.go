// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

func TestVersionedBucketDeletesEveryVersionAndDeleteMarker(t *testing.T) {
	ctx := context.Background()
	store, raw, name := newStore(t, minio.SecretData()), minio.S3Client(), newBucketName()
	if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &name,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	for round := range 2 { // two versions of every object
		var keys []string
		for i := range 600 {
			keys = append(keys, fmt.Sprintf("shoot--a--b--1/etcd-main/v2/Full-%04d", i))
		}
		keys = append(keys, fmt.Sprintf("shoot--a--b--10/etcd-main/v2/Full-%04d", round))
		if err := conformance.PutMany(ctx, store, name, keys); err != nil {
			t.Fatal(err)
		}
	}
	// A delete marker on top of one object.
	if _, err := raw.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &name, Key: aws.String("shoot--a--b--1/etcd-main/v2/Full-0000")}); err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, store, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Deleted != 1201 {
		t.Fatalf("got %+v, %v; want 1200 versions and 1 delete marker deleted", res, err)
	}
	left, err := raw.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &name})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.DeleteMarkers) != 0 || len(left.Versions) != 2 {
		t.Fatalf("left %d versions and %d delete markers; want only the neighbour's 2 versions", len(left.Versions), len(left.DeleteMarkers))
	}
	for _, v := range left.Versions {
		if !strings.HasPrefix(aws.ToString(v.Key), "shoot--a--b--10/") {
			t.Fatalf("a version outside the neighbour survived: %s", aws.ToString(v.Key))
		}
	}
}

// TestFailedLockLookupIsNotCachedAsUnlocked: an S3 stand-in (httptest, playing the documented
// DeleteObjects, GetObjectLockConfiguration, GetObjectLegalHold and GetObjectRetention answers)
// refuses a locked key with AccessDenied, as AWS does, and fails the first lock-configuration
// lookup. The key is then a failure that says the lock state is unknown -- and the next batch
// asks again and finds the lock, instead of trusting a cached "not locked".
func TestFailedLockLookupIsNotCachedAsUnlocked(t *testing.T) {
	var lookups atomic.Int64
	until := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/xml")
		switch {
		case r.Method == http.MethodPost && q.Has("delete"):
			_, _ = w.Write([]byte(`<DeleteResult><Error><Key>shoot--a--b--1/k</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error></DeleteResult>`))
		case q.Has("object-lock"):
			if lookups.Add(1) == 1 {
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`<Error><Code>AccessDenied</Code><Message>no s3:GetBucketObjectLockConfiguration</Message></Error>`))
				return
			}
			_, _ = w.Write([]byte(`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>`))
		case q.Has("legal-hold"):
			_, _ = w.Write([]byte(`<LegalHold><Status>OFF</Status></LegalHold>`))
		case q.Has("retention"):
			_, _ = w.Write([]byte(`<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>` + until + `</RetainUntilDate></Retention>`))
		default:
			w.WriteHeader(http.StatusNotImplemented)
		}
	}))
	defer srv.Close()
	store := newStore(t, withData(minio.SecretData(), "endpoint", srv.URL))
	objs := []objectstore.ObjectVersion{{Key: "shoot--a--b--1/k"}}

	errs, err := store.DeleteObjects(context.Background(), "bucket", objs)
	if err != nil || len(errs) != 1 {
		t.Fatalf("first batch = %v, %v; want one per-object error", errs, err)
	}
	if errors.Is(errs[0].Err, objectstore.ErrObjectLocked) || !errors.Is(errs[0].Err, objectstore.ErrForbidden) || !strings.Contains(errs[0].Err.Error(), "unknown") {
		t.Fatalf("with the lock lookup failing: %v; want a forbidden failure that says the lock state is unknown", errs[0].Err)
	}
	errs, err = store.DeleteObjects(context.Background(), "bucket", objs)
	var locked *objectstore.LockedError
	if err != nil || len(errs) != 1 || !errors.As(errs[0].Err, &locked) || locked.RetainUntil.IsZero() {
		t.Fatalf("second batch = %v, %v; want the key reported locked (the failed lookup must not be cached)", errs, err)
	}
}

// TestListingRetentionFromTheDefaultRetention: an S3 stand-in (httptest, playing the documented
// GetBucketVersioning, GetObjectLockConfiguration and ListObjectVersions answers) has a bucket
// with a default retention of two days. A listing reports Modified + 2 days for each version and
// nothing for a delete marker, and reads the configuration once per store. A store whose lookup
// is refused lists all the same, with no retention, and does not ask again for its listings.
func TestListingRetentionFromTheDefaultRetention(t *testing.T) {
	var lookups atomic.Int64
	var refuse atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/xml")
		switch {
		case q.Has("versioning"):
			_, _ = w.Write([]byte(`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`))
		case q.Has("object-lock"):
			lookups.Add(1)
			if refuse.Load() {
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`<Error><Code>AccessDenied</Code><Message>no s3:GetBucketObjectLockConfiguration</Message></Error>`))
				return
			}
			_, _ = w.Write([]byte(`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>2</Days></DefaultRetention></Rule></ObjectLockConfiguration>`))
		case q.Has("versions"):
			_, _ = w.Write([]byte(`<ListVersionsResult><Name>bucket</Name><IsTruncated>false</IsTruncated>` +
				`<Version><Key>k</Key><VersionId>v2</VersionId><IsLatest>true</IsLatest><LastModified>2026-03-01T10:00:00.000Z</LastModified><Size>7</Size></Version>` +
				`<Version><Key>k</Key><VersionId>v1</VersionId><IsLatest>false</IsLatest><LastModified>2026-03-01T09:00:00.000Z</LastModified><Size>3</Size></Version>` +
				`<DeleteMarker><Key>gone</Key><VersionId>m1</VersionId><IsLatest>true</IsLatest><LastModified>2026-03-01T11:00:00.000Z</LastModified></DeleteMarker>` +
				`</ListVersionsResult>`))
		default:
			w.WriteHeader(http.StatusNotImplemented)
		}
	}))
	defer srv.Close()
	list := func(store conformance.Stores) map[string]objectstore.ObjectVersion {
		t.Helper()
		got := map[string]objectstore.ObjectVersion{}
		err := store.ListObjects(context.Background(), "bucket", "", func(page []objectstore.ObjectVersion) error {
			for _, o := range page {
				got[o.Version] = o
			}
			return nil
		})
		if err != nil || len(got) != 3 {
			t.Fatalf("listing = %v, %v; want three entries", got, err)
		}
		return got
	}
	at := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }

	store := newStore(t, withData(minio.SecretData(), "endpoint", srv.URL))
	for range 2 {
		got := list(store)
		if v := got["v2"]; v.Size != 7 || v.Noncurrent || !v.Modified.Equal(at("2026-03-01T10:00:00Z")) || !v.RetainUntil.Equal(at("2026-03-03T10:00:00Z")) {
			t.Fatalf("current version %+v; want size 7, current, retained two days after its write", v)
		}
		if v := got["v1"]; v.Size != 3 || !v.Noncurrent || !v.RetainUntil.Equal(at("2026-03-03T09:00:00Z")) {
			t.Fatalf("older version %+v; want size 3, noncurrent, retained two days after its write", v)
		}
		if m := got["m1"]; !m.Noncurrent || !m.RetainUntil.IsZero() || m.Size != 0 {
			t.Fatalf("delete marker %+v; want noncurrent, no retention", m)
		}
	}
	if n := lookups.Load(); n != 1 {
		t.Fatalf("two listings read the Object Lock configuration %d times; want once per store", n)
	}

	refuse.Store(true)
	lookups.Store(0)
	refused := newStore(t, withData(minio.SecretData(), "endpoint", srv.URL))
	for range 2 {
		for _, o := range list(refused) {
			if !o.RetainUntil.IsZero() {
				t.Fatalf("with the lookup refused, %+v reports a retention; want none", o)
			}
		}
	}
	if n := lookups.Load(); n != 1 {
		t.Fatalf("with the lookup refused, two listings asked %d times; want once per store", n)
	}
}
