// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

func TestBulkDeleteFollowsTheAdvertisedLimit(t *testing.T) {
	bulk := newStore(t, cloud.SecretData("demo"))
	noBulk := newStore(t, with(cloud.SecretData("demo"), "region", "NoBulk"))
	if got := bulk.MaxDeleteBatch(); got != maxDeletes {
		t.Fatalf("with bulk delete: batch %d; want the cluster's advertised %d", got, maxDeletes)
	}
	if got := noBulk.MaxDeleteBatch(); got == maxDeletes {
		t.Fatalf("without bulk delete the batch is still the bulk limit %d", got)
	}
	// More objects than one bulk request takes: chunked, all deleted, the neighbour intact.
	ctx := context.Background()
	name := newContainerName()
	if err := bulk.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "RegionOne"}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range 3*maxDeletes + 7 {
		keys = append(keys, fmt.Sprintf("shoot--a--b--1/etcd-main/v2/Full-%04d", i))
	}
	if err := conformance.PutMany(ctx, bulk, name, append(keys, "shoot--a--b--10/keep")); err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, bulk, name, prefix, objectstore.DeleteOptions{Parallelism: 1})
	if err != nil || !res.Done || res.Deleted != len(keys) {
		t.Fatalf("got %+v, %v; want all %d deleted", res, err, len(keys))
	}
	left, _ := conformance.ListKeys(ctx, bulk, name, "")
	if len(left) != 1 || left[0] != "shoot--a--b--10/keep" {
		t.Fatalf("left %v; want only the neighbour", left)
	}
}

func TestVersionedContainerDeletesEveryVersion(t *testing.T) {
	ctx := context.Background()
	store, name := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{Versioning: true}), newContainerName()
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "RegionOne"}); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		if err := conformance.PutMany(ctx, store, name, []string{"shoot--v--1/a", "shoot--v--1/b", fmt.Sprintf("shoot--v--10/keep-%d", round)}); err != nil {
			t.Fatal(err)
		}
	}
	versions := 0
	if err := store.ListObjects(ctx, name, "shoot--v--1/", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			if o.Version == "" {
				return fmt.Errorf("%s listed without a version in a versioned container", o.Key)
			}
			versions++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if versions != 6 {
		t.Fatalf("listed %d versions under the prefix; want 6 (2 objects x 3 writes)", versions)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--v--1")
	res, err := objectstore.DeletePrefix(ctx, store, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done {
		t.Fatalf("got %+v, %v", res, err)
	}
	again := 0
	_ = store.ListObjects(ctx, name, "shoot--v--1/", func(page []objectstore.ObjectVersion) error { again += len(page); return nil })
	if again != 0 {
		t.Fatalf("%d versions survived the deletion", again)
	}
	left, _ := conformance.ListKeys(ctx, store, name, "shoot--v--10/")
	if len(left) != 3 {
		t.Fatalf("the neighbour's objects were touched: %v", left)
	}
}

// An entry whose container does not exist: the store says so with the container's name, and the
// deletion engine takes it as nothing left to delete; nothing is created.
func TestEntryDeletionInAMissingContainer(t *testing.T) {
	ctx := context.Background()
	store, name := newStore(t, cloud.SecretData("demo")), newContainerName()
	before := accountContainers(t)
	err := store.ListObjects(ctx, name, "shoot--garden--x/", func([]objectstore.ObjectVersion) error { return nil })
	if !errors.Is(err, objectstore.ErrBucketNotFound) || !strings.Contains(err.Error(), name) {
		t.Fatalf("got %v; want ErrBucketNotFound naming %q", err, name)
	}
	if err := deleteEntryIn(name)(t, cloud.SecretData("demo")); err != nil {
		t.Fatalf("got %v; a missing container leaves nothing to delete", err)
	}
	if after := accountContainers(t); !slices.Equal(before, after) {
		t.Fatalf("the account's containers changed: before %v, after %v", before, after)
	}
}
