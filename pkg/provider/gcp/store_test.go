// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/gcp"
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func rawClient(t *testing.T, data map[string][]byte) *storage.Client {
	t.Helper()
	c, _, err := testProvider.NewClient(context.Background(), provider.Credentials{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestObjectsUnderRetentionAreReportedAndDeferred(t *testing.T) {
	ctx := ctxFor(t)
	data := gcs.SecretData()
	s := newStore(t, data)
	name := newBucketName()
	if err := ensure(t, s, name, immutable(24*time.Hour, false)); err != nil {
		t.Fatal(err)
	}
	mine := []string{"shoot--a--b--1/etcd-main/v2/Full-1", "shoot--a--b--1/etcd-main/v2/Incr-2", "shoot--a--b--1/etcd-main/v2/Incr-3"}
	neighbour := "shoot--a--b--10/etcd-main/v2/Full-1"
	if err := conformance.PutMany(ctx, s, name, append(slices.Clone(mine), neighbour)); err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, s, name, prefix, objectstore.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done || res.Locked != len(mine) || res.Deleted != 0 {
		t.Fatalf("result %+v; want done with %d locked", res, len(mine))
	}
	if until := time.Until(res.EarliestRetainUntil); until < 23*time.Hour || until > 25*time.Hour {
		t.Fatalf("earliest retain-until %v is not about a day ahead", res.EarliestRetainUntil)
	}
	if _, err := s.DeferDeletion(ctx, name, prefix.String()); err != nil {
		t.Fatal(err)
	}
	c := rawClient(t, data)
	for _, k := range append(slices.Clone(mine), neighbour) {
		a, err := c.Bucket(name).Object(k).Attrs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if marked := !a.CustomTime.IsZero(); marked != (k != neighbour) {
			t.Fatalf("%s: custom time %v; only the objects under the prefix are marked", k, a.CustomTime)
		}
	}
	objectPatches := func() int {
		n := 0
		for _, r := range gcs.Requests("/storage/v1/b/" + name + "/o/") {
			if r.Method == http.MethodPatch {
				n++
			}
		}
		return n
	}
	before := objectPatches()
	if _, err := s.DeferDeletion(ctx, name, prefix.String()); err != nil {
		t.Fatal(err)
	}
	if objectPatches() != before {
		t.Fatal("a second deferral re-marked objects that were marked already")
	}
	rules, _ := field(t, name, "lifecycle")["rule"].([]any)
	if !slices.ContainsFunc(rules, func(r any) bool {
		return fmt.Sprint(r) == "map[action:map[type:Delete] condition:map[daysSinceCustomTime:1]]"
	}) {
		t.Fatalf("lifecycle rules %v lack the bucket's deferred-deletion rule", rules)
	}
}

func TestDeletesNameTheListedGeneration(t *testing.T) {
	ctx := ctxFor(t)
	s := newStore(t, gcs.SecretData())
	name := newBucketName()
	if err := ensure(t, s, name, nil); err != nil {
		t.Fatal(err)
	}
	const key = "shoot--a--b--1/etcd-main/v2/Full-1"
	if err := s.PutObject(ctx, name, key, []byte("old")); err != nil {
		t.Fatal(err)
	}
	var listed []objectstore.ObjectVersion
	if err := s.ListObjects(ctx, name, "shoot--a--b--1/", func(p []objectstore.ObjectVersion) error { listed = append(listed, p...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Version == "" {
		t.Fatalf("listed %+v; want one object with its generation", listed)
	}
	// The sidecar writes a new generation between the listing and the delete.
	if err := s.PutObject(ctx, name, key, []byte("new")); err != nil {
		t.Fatal(err)
	}
	failed, err := s.DeleteObjects(ctx, name, listed)
	if err != nil || len(failed) != 0 {
		t.Fatalf("DeleteObjects = %v, %v", failed, err)
	}
	got, err := objectstore.ReadObject(ctx, s, name, key)
	if err != nil || string(got) != "new" {
		t.Fatalf("reading it = %q, %v; the delete of the listed generation must leave the newer one", got, err)
	}
}

func TestThrottledDeletesComplete(t *testing.T) {
	throttling, err := gcpstack.StartGCS(gcpstack.GCSOptions{ThrottleEvery: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer throttling.Stop()
	ctx := ctxFor(t)
	s := newStore(t, throttling.SecretData())
	name := newBucketName()
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: region}); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 300)
	for i := range keys {
		keys[i] = fmt.Sprintf("shoot--a--b--1/etcd-main/v2/Incr-%04d", i)
	}
	if err := conformance.PutMany(ctx, s, name, append(keys, "shoot--a--b--10/x")); err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, s, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done {
		t.Fatalf("DeletePrefix = %+v, %v", res, err)
	}
	left, err := conformance.ListKeys(ctx, s, name, "")
	if err != nil || !slices.Equal(left, []string{"shoot--a--b--10/x"}) {
		t.Fatalf("left %v, %v; want only the neighbour", left, err)
	}
	if throttling.Throttled.Load() == 0 {
		t.Fatal("the stand-in throttled nothing; the test proves nothing")
	}
}
