// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Why handBack must leave no version behind: provider-openstack's container deletion on a
// container holding versions never ends (Swift answers 409 "Delete all versions before deleting
// container" however often its current objects are deleted), and its entry deletion deletes no
// version.
func TestIncumbentCannotDeleteVersions(t *testing.T) {
	ctx := context.Background()
	sc, name := swiftAs(t, "demo"), newContainerName()
	if _, err := containers.Create(ctx, sc, name, containers.CreateOpts{VersionsEnabled: true}).Extract(); err != nil {
		t.Fatal(err)
	}
	putObject(t, sc, name, "shoot--v--1/etcd-main/v2/Full-1", "first")
	putObject(t, sc, name, "shoot--v--1/etcd-main/v2/Full-1", "second")
	if err := incumbentDeleteContainer(t, sc, name, 3); !gophercloud.ResponseCodeIs(err, 409) {
		t.Fatalf("provider-openstack's container deletion: %v; want Swift's 409 after every round", err)
	}
}

// Issue 26 (openstack), hand back: with handBack, a container that was versioned under this
// extension is turned unversioned and refused while an object written under versioning or a
// noncurrent version is left; then read back and released; provider-openstack's own calls then delete an entry for real and the container.
func TestHandBackLeavesWhatTheIncumbentCanDelete(t *testing.T) {
	ctx := context.Background()
	sc, name := swiftAs(t, "demo"), newContainerName()
	bucket := objectstore.Bucket{Name: name, Region: "RegionOne"}
	versioned := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{Versioning: true})
	if err := versioned.EnsureBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	for _, k := range snapshotKeys {
		putObject(t, sc, name, k, "old "+k)
		putObject(t, sc, name, k, "snapshot "+k) // the first write is a noncurrent version now
	}

	handBack := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{HandBack: true})
	err := handBack.EnsureBucket(ctx, bucket)
	if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "versioning was on") {
		t.Fatalf("handBack with versioned objects: %v; want ErrInvalidConfig naming one", err)
	}
	if got := readState(t, sc, name); got.versioning {
		t.Fatalf("handBack left versioning on: %+v", got)
	}

	// The operator rewrites each object unversioned, as the message says.
	for _, k := range snapshotKeys {
		if _, err := objects.Create(ctx, sc, name, k, objects.CreateOpts{CopyFrom: name + "/" + k, Content: strings.NewReader("")}).Extract(); err != nil {
			t.Fatal(err)
		}
	}
	err = handBack.EnsureBucket(ctx, bucket)
	if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "noncurrent object versions") {
		t.Fatalf("handBack with noncurrent versions left: %v; want ErrInvalidConfig naming them", err)
	}
	// ... and deletes the noncurrent versions (here through the store).
	var old []objectstore.ObjectVersion
	if err := handBack.ListObjects(ctx, name, "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			if o.Noncurrent {
				old = append(old, o)
			}
		}
		return nil
	}); err != nil || len(old) != 2*len(snapshotKeys) {
		t.Fatalf("listed %d noncurrent versions (%v); want %d", len(old), err, 2*len(snapshotKeys))
	}
	if failed, err := handBack.DeleteObjects(ctx, name, old); err != nil || len(failed) != 0 {
		t.Fatalf("deleting the noncurrent versions: %v, %v", failed, err)
	}
	if err := handBack.EnsureBucket(ctx, bucket); err != nil {
		t.Fatalf("handBack without versions: %v", err)
	}
	got := readState(t, sc, name)
	if got.versioning || got.read != "" || got.write != "" || got.meta["Gardener-Backup-Bucket"] != name {
		t.Fatalf("handed back, the container reads %+v", got)
	}
	for _, k := range snapshotKeys {
		if data, err := getObject(sc, name, k); err != nil || data != "snapshot "+k {
			t.Fatalf("%s after the hand-back reads %q, %v", k, data, err)
		}
	}

	// provider-openstack again: its reconcile, an entry's deletion, the bucket's deletion.
	incumbentReconcile(t, sc, name)
	incumbentDeleteEntry(t, sc, name, "shoot--p--b")
	left := 0
	if err := handBack.ListObjects(ctx, name, "shoot--p--b/", func(page []objectstore.ObjectVersion) error { left += len(page); return nil }); err != nil || left != 0 {
		t.Fatalf("after provider-openstack's entry deletion %d versions are left under shoot--p--b/ (%v)", left, err)
	}
	if names, _ := listNames(sc, name); len(names) != 3 {
		t.Fatalf("provider-openstack's entry deletion left %v; want shoot--p--a's 3 snapshots", names)
	}
	if err := incumbentDeleteContainer(t, sc, name, 30); err != nil {
		var left []string
		_ = handBack.ListObjects(ctx, name, "", func(page []objectstore.ObjectVersion) error {
			for _, o := range page {
				left = append(left, o.Key+"@"+o.Version)
			}
			return nil
		})
		t.Fatalf("provider-openstack's container deletion after the hand-back: %v (versions left: %v)", err, left)
	}
	if _, err := containers.Get(ctx, sc, name, nil).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Fatalf("the container is still there: %v", err)
	}
}
