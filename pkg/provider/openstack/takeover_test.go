// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// What gardener-extension-provider-openstack v1.57.0 does to Swift, call for call, through a plain
// gophercloud client of the same project (the module is not served, so its code cannot run here).

// incumbentReconcile is its BackupBucket reconcile: pkg/controller/backupbucket/actuator.go:38
// CreateContainerIfNotExists(ctx, bb.Name), which is pkg/openstack/client/swift.go:62
// containers.Create(ctx, client, container, nil): a PUT without any header or metadata.
func incumbentReconcile(t *testing.T, sc *gophercloud.ServiceClient, container string) {
	t.Helper()
	if _, err := containers.Create(context.Background(), sc, container, nil).Extract(); err != nil {
		t.Fatalf("provider-openstack's reconcile of %s: %v", container, err)
	}
}

// incumbentDeleteEntry is its BackupEntry deletion: pkg/controller/backupentry/actuator.go:45-46,
// DeleteObjectsWithPrefix(ctx, bucketName, "<entry without source->/").
func incumbentDeleteEntry(t *testing.T, sc *gophercloud.ServiceClient, container, entry string) {
	t.Helper()
	incumbentDeleteObjectsWithPrefix(t, sc, container, strings.TrimPrefix(entry, "source-")+"/")
}

// incumbentDeleteObjectsWithPrefix is pkg/openstack/client/swift.go:32-57: the current objects
// listed by name, all of them in one bulk delete, whose per-object outcome is not read.
func incumbentDeleteObjectsWithPrefix(t *testing.T, sc *gophercloud.ServiceClient, container, prefix string) {
	t.Helper()
	ctx := context.Background()
	pages, err := objects.List(sc, container, &objects.ListOpts{Prefix: prefix}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names, err := objects.ExtractNames(pages)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := objects.BulkDelete(ctx, sc, container, names).Extract(); err != nil {
		t.Fatalf("provider-openstack's deletion of %q in %s: %v", prefix, container, err)
	}
}

// incumbentDeleteContainer is its BackupBucket deletion, pkg/openstack/client/swift.go:73-89: a 409
// deletes every current object and tries again, without a bound; here at most rounds times, a
// moment apart (Swift's container listing follows object deletions asynchronously).
func incumbentDeleteContainer(t *testing.T, sc *gophercloud.ServiceClient, container string, rounds int) error {
	t.Helper()
	ctx := context.Background()
	var err error
	for range rounds {
		_, err = containers.Delete(ctx, sc, container).Extract()
		if err == nil || gophercloud.ResponseCodeIs(err, 404) {
			return nil
		}
		if !gophercloud.ResponseCodeIs(err, 409) {
			return err
		}
		incumbentDeleteObjectsWithPrefix(t, sc, container, "") // swift.go:81
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// containerState is what the tests compare of a container: its ACLs, versioning and metadata.
type containerState struct {
	read, write string
	versioning  bool
	meta        map[string]string
}

func readState(t *testing.T, sc *gophercloud.ServiceClient, container string) containerState {
	t.Helper()
	res := containers.Get(context.Background(), sc, container, nil)
	h, err := res.Extract()
	if err != nil {
		t.Fatal(err)
	}
	md, err := res.ExtractMetadata()
	if err != nil {
		t.Fatal(err)
	}
	return containerState{strings.Join(h.Read, ","), strings.Join(h.Write, ","), h.VersionsEnabled, md}
}

// snapshotKeys are objects as etcd-backup-restore names them, under three entries.
var snapshotKeys = []string{
	"shoot--p--a/etcd-main/v2/Full-00000000-00000010-1700000000.gz",
	"shoot--p--a/etcd-main/v2/Incr-00000011-00000020-1700000600.gz",
	"shoot--p--a/etcd-events/v2/Full-00000000-00000005-1700000000.gz",
	"shoot--p--b/etcd-main/v2/Full-00000000-00000007-1700000000.gz",
	"shoot--p--b/etcd-main/v2/Incr-00000008-00000009-1700000300.gz",
}

// Issue 26 (openstack): a container provider-openstack made and wrote to is adopted as it is:
// marked, kept private, every object kept; an entry it created is then deleted by this
// extension's path; the shoots' etcd-backup data is what provider-openstack gave them.
func TestTakeoverAdoptsTheIncumbentsContainer(t *testing.T) {
	ctx := context.Background()
	sc, name := swiftAs(t, "demo"), newContainerName()
	incumbentReconcile(t, sc, name)
	incumbentReconcile(t, sc, name) // its periodic reconcile: Swift answers 202
	for _, k := range append(snapshotKeys, "shoot--p--c/etcd-main/v2/Full-00000000-00000001-1700000000.gz") {
		putObject(t, sc, name, k, "snapshot "+k)
	}
	// Its entry deletion leaves nothing pending: Swift has no lock, and it deletes at once.
	incumbentDeleteEntry(t, sc, name, "shoot--p--c")
	if left, _ := listNames(sc, name); len(left) != len(snapshotKeys) {
		t.Fatalf("after provider-openstack's entry deletion the container holds %v", left)
	}

	store := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{})
	for round := range 2 {
		if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "RegionOne"}); err != nil {
			t.Fatalf("reconcile %d of provider-openstack's container: %v", round, err)
		}
		got := readState(t, sc, name)
		want := map[string]string{"Gardener-Backup-Bucket": name, "Gardener-Backup-Adopted-From": "provider-openstack"}
		if !maps.Equal(got.meta, want) || got.read != "" || got.write != "" || got.versioning {
			t.Fatalf("reconcile %d: container reads %+v; want private, unversioned, metadata %v", round, got, want)
		}
	}
	for _, k := range snapshotKeys {
		if got, err := getObject(sc, name, k); err != nil || got != "snapshot "+k {
			t.Fatalf("%s after the takeover reads %q, %v", k, got, err)
		}
	}
	// provider-openstack's reconcile may still run once during the switch: nothing of the
	// adoption is undone.
	incumbentReconcile(t, sc, name)
	if got := readState(t, sc, name); got.meta["Gardener-Backup-Bucket"] != name {
		t.Fatalf("provider-openstack's PUT dropped the marker: %+v", got)
	}

	prefix, _ := objectstore.EntryPrefix("shoot--p--b")
	if res, err := objectstore.DeletePrefix(ctx, store, name, prefix, objectstore.DeleteOptions{}); err != nil || !res.Done || res.Deleted != 2 {
		t.Fatalf("deleting the entry provider-openstack made: %+v, %v; want 2 deleted and done", res, err)
	}
	if left, _ := listNames(sc, name); len(left) != 3 || !strings.HasPrefix(left[0], "shoot--p--a/") {
		t.Fatalf("after the entry's deletion the container holds %v; want shoot--p--a's 3 snapshots", left)
	}

	// The shoots' etcd-backup: provider-openstack gives the entry secret's data plus bucketName
	// (gardener v1.150.0 extensions/pkg/controller/backupentry/genericactuator/actuator.go:92)
	// and region = spec.region (provider-openstack pkg/controller/backupentry/actuator.go:36).
	data := cloud.SecretData("demo")
	data["bucketName"] = []byte(name)
	be := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{Region: "RegionOne", BucketName: name}}
	incumbent := maps.Clone(data)
	incumbent["region"] = []byte(be.Spec.Region)
	ours, err := testProvider.EtcdBackupSecretData(be, maps.Clone(data))
	if err != nil || !maps.EqualFunc(ours, incumbent, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatalf("etcd-backup data differs from provider-openstack's (%v): keys %v, want %v", err, slicesOfKeys(ours), slicesOfKeys(incumbent))
	}
}

func slicesOfKeys(m map[string][]byte) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// Issue 26: a container of the bucket's name that is neither this extension's nor in
// provider-openstack's form stays foreign: ErrOwnedByOther from every act that would change it,
// nothing changed, no metadata value in the message.
func TestLookAlikeContainersStayForeign(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta map[string]string
	}{
		{"marked for another bucket", map[string]string{"Gardener-Backup-Bucket": "another-bucket"}},
		{"somebody else's metadata", map[string]string{"Owner": "team-data", "Temp-Url-Key": "tempurl-s3cr3t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			sc, name := swiftAs(t, "demo"), newContainerName()
			if _, err := containers.Create(ctx, sc, name, containers.CreateOpts{Metadata: tc.meta, ContainerRead: ".r:*"}).Extract(); err != nil {
				t.Fatal(err)
			}
			const key = "shoot--x--y/etcd-main/v2/Full-00000000-00000001-1700000000.gz"
			putObject(t, sc, name, key, "theirs")
			before := readState(t, sc, name)

			store := newConfiguredStore(t, testProvider, cloud.SecretData("demo"), &osapi.BackupBucketConfig{})
			err := store.EnsureBucket(ctx, objectstore.Bucket{Name: name, Region: "RegionOne"})
			if !errors.Is(err, objectstore.ErrOwnedByOther) || strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("EnsureBucket: %v; want ErrOwnedByOther without metadata values", err)
			}
			prefix, _ := objectstore.EntryPrefix("shoot--x--y")
			if _, err := objectstore.DeletePrefix(ctx, store, name, prefix, objectstore.DeleteOptions{}); !errors.Is(err, objectstore.ErrOwnedByOther) {
				t.Fatalf("entry deletion: %v; want ErrOwnedByOther", err)
			}
			if err := store.DeleteBucket(ctx, name); !errors.Is(err, objectstore.ErrOwnedByOther) {
				t.Fatalf("DeleteBucket: %v; want ErrOwnedByOther", err)
			}
			if after := readState(t, sc, name); after.read != before.read || !maps.Equal(after.meta, before.meta) || after.versioning != before.versioning {
				t.Fatalf("the container changed from %+v to %+v", before, after)
			}
			if got, err := getObject(sc, name, key); err != nil || got != "theirs" {
				t.Fatalf("their object reads %q, %v", got, err)
			}
		})
	}
}

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
	var wait *objectstore.HandBackWaitError
	if !errors.As(err, &wait) || !wait.ByOperator || errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "versioning was on") {
		t.Fatalf("handBack with versioned objects: %v; want a HandBackWaitError (by the operator, no configuration error) naming one", err)
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
	if !errors.As(err, &wait) || errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "noncurrent object versions") {
		t.Fatalf("handBack with noncurrent versions left: %v; want a HandBackWaitError naming them", err)
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
	final := bucket
	final.HandBackComplete = true // the BackupBucket controller's pass that completes the hand-back
	if err := handBack.EnsureBucket(ctx, final); err != nil {
		t.Fatalf("handBack without versions: %v", err)
	}
	got := readState(t, sc, name)
	if got.versioning || got.read != "" || got.write != "" || len(got.meta) != 0 {
		t.Fatalf("handed back, the container reads %+v; want it unversioned, private and without this extension's metadata", got)
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
