// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"
	gardenerutils "github.com/gardener/gardener/pkg/utils/gardener"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const gardenUIDValue = "6f1d3c2a-garden"

// entryNameOf is the entry name gardener gives a control plane namespace's etcd (gardener's own
// function; gardener-operator builds the garden's the same way: garden--<uid>).
func entryNameOf(t *testing.T, namespace string, uid types.UID) string {
	t.Helper()
	name, err := gardenerutils.GenerateBackupEntryName(namespace, "", uid)
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// gardenEntry is the BackupEntry gardener-operator creates for the garden (class garden).
func gardenEntry(t *testing.T, bucket string) *extensionsv1alpha1.BackupEntry {
	return &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: entryNameOf(t, v1beta1constants.GardenNamespace, gardenUIDValue)},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem", Class: new(extensionsv1alpha1.ExtensionClassGarden)}, BucketName: bucket}}
}

// gardenWith is a Garden with etcd-main's backup in bucketName (nil: gardener-operator's default
// garden-<uid>) and gardener-operator's finalizer, being deleted if asked.
func gardenWith(bucketName *string, deleting bool) *operatorv1alpha1.Garden {
	g := &operatorv1alpha1.Garden{ObjectMeta: metav1.ObjectMeta{Name: "garden", UID: gardenUIDValue, Finalizers: []string{operatorv1alpha1.FinalizerName}}}
	g.Spec.VirtualCluster.ETCD = &operatorv1alpha1.ETCD{Main: &operatorv1alpha1.ETCDMain{Backup: &operatorv1alpha1.Backup{Provider: "mem", BucketName: bucketName}}}
	if deleting {
		now := metav1.Now()
		g.DeletionTimestamp = &now
	}
	return g
}

// createGarden creates g on c; one being deleted is created and then deleted (its finalizer
// keeps it), as an API server has it.
func createGarden(t *testing.T, c client.Client, g *operatorv1alpha1.Garden) {
	t.Helper()
	deleting := g.DeletionTimestamp != nil
	g = g.DeepCopy()
	g.DeletionTimestamp = nil
	if err := c.Create(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if deleting {
		if err := c.Delete(context.Background(), g); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLocate: where each kind of entry's snapshots are, named as gardener names them.
func TestLocate(t *testing.T) {
	vg := operatorv1alpha1.VirtualGardenETCDMain + "/"
	defaultBucket := "garden-" + gardenUIDValue
	cases := []struct {
		name       string
		be         *extensionsv1alpha1.BackupEntry
		garden     *operatorv1alpha1.Garden
		wantPrefix string
		wantOwner  string
		wantKeep   bool
		wantErr    string // a *entryinfo.LocationError's field path
	}{
		{name: "shoot", be: &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: entryNameOf(t, "shoot--p--s", "uid1")}},
			wantPrefix: "shoot--p--s--uid1/", wantOwner: entryinfo.OwnerShoot},
		{name: "migration's source entry", be: &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: v1beta1constants.BackupSourcePrefix + "-" + entryNameOf(t, "shoot--p--s", "uid1")}},
			wantPrefix: "shoot--p--s--uid1/", wantOwner: entryinfo.OwnerShoot},
		{name: "self-hosted shoot", be: &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: entryNameOf(t, metav1.NamespaceSystem, "uid2")}},
			wantPrefix: "kube-system--uid2/", wantOwner: entryinfo.OwnerShoot},
		{name: "garden being deleted, default bucket", be: gardenEntry(t, defaultBucket), garden: gardenWith(nil, true), wantPrefix: vg, wantOwner: entryinfo.OwnerGarden},
		{name: "garden live: kept", be: gardenEntry(t, defaultBucket), garden: gardenWith(nil, false), wantPrefix: vg, wantOwner: entryinfo.OwnerGarden, wantKeep: true},
		{name: "garden being deleted, configured bucket", be: gardenEntry(t, "shared"), garden: gardenWith(new("shared"), true), wantPrefix: vg, wantOwner: entryinfo.OwnerGarden},
		{name: "garden being deleted, bucket with a path", be: gardenEntry(t, "shared"), garden: gardenWith(new("shared/landscape/prod/"), true),
			wantPrefix: "landscape/prod/" + vg, wantOwner: entryinfo.OwnerGarden},
		{name: "garden gone, default bucket", be: gardenEntry(t, defaultBucket), wantPrefix: vg, wantOwner: entryinfo.OwnerGarden},
		{name: "garden gone, configured bucket: path unknown", be: gardenEntry(t, "shared"), wantErr: "spec.bucketName"},
		{name: "garden's bucket is not the entry's", be: gardenEntry(t, "other"), garden: gardenWith(new("shared/landscape"), true), wantErr: "spec.bucketName"},
		{name: "bucketName with an empty path", be: gardenEntry(t, "shared"), garden: gardenWith(new("shared/"), true), wantErr: "spec.virtualCluster.etcd.main.backup.bucketName"},
		{name: "class garden, not gardener-operator's name", be: func() *extensionsv1alpha1.BackupEntry {
			be := gardenEntry(t, "shared")
			be.Name = entryNameOf(t, "shoot--p--s", "uid1")
			return be
		}(), wantErr: "metadata.name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc, err := entryinfo.Locate(c.be, c.garden)
			if c.wantErr != "" {
				var locErr *entryinfo.LocationError
				if !errors.As(err, &locErr) || locErr.Field != c.wantErr || !errors.Is(err, objectstore.ErrInvalidConfig) {
					t.Fatalf("Locate = %+v, %v; want a LocationError in %s", loc, err, c.wantErr)
				}
				return
			}
			if err != nil || loc.Prefix.String() != c.wantPrefix || loc.Owner != c.wantOwner || loc.Prefix.Validate() != nil {
				t.Fatalf("Locate = %q (%s), %v; want %q (%s)", loc.Prefix.String(), loc.Owner, err, c.wantPrefix, c.wantOwner)
			}
			var kept *entryinfo.GardenKeptError
			if errors.As(loc.Keep, &kept) != c.wantKeep || (c.wantKeep && kept.Prefix != c.wantPrefix) {
				t.Fatalf("Keep = %v; want kept: %t", loc.Keep, c.wantKeep)
			}
		})
	}
}

// garden's snapshots as its etcd writes them (store prefix `<prefix>etcd-main`), and what shares
// the bucket: another garden's without a path, a seed's shoot, the entry's own name, neighbours
// whose names extend the garden's prefix.
func gardenBucketKeys(prefix string) (garden, others []string) {
	for _, k := range []string{"Full-00000000-00000010-1700000000.gz", "Incr-00000011-00000020-1700000600.gz"} {
		garden = append(garden, prefix+"etcd-main/v2/"+k)
	}
	for _, k := range []string{
		operatorv1alpha1.VirtualGardenETCDMain + "/etcd-main/v2/Full-1", "landscape/" + operatorv1alpha1.VirtualGardenETCDMain + "/etcd-main/v2/Full-1",
		"landscape/" + operatorv1alpha1.VirtualGardenETCDMain + "-2/etcd-main/v2/Full-1", operatorv1alpha1.VirtualGardenETCDMain + "x/etcd-main/v2/Full-1",
		"shoot--a--b--1/etcd-main/v2/Full-1", v1beta1constants.GardenNamespace + "--" + gardenUIDValue + "x/y",
	} {
		if !strings.HasPrefix(k, prefix) {
			others = append(others, k)
		}
	}
	return garden, others
}

// TestGardenEntryDeletion: a garden's entry deletes exactly what its virtual garden's etcd wrote
// (gardener-operator's [<path>/]virtual-garden-etcd-main/), and only while its Garden is being
// deleted or gone; while the Garden lives, or where the place cannot be told, nothing is deleted
// and the entry is kept with ERR_CONFIGURATION_PROBLEM and a BackupsKept event.
func TestGardenEntryDeletion(t *testing.T) {
	cases := []struct {
		name       string
		bucketName *string // the Garden's spec.virtualCluster.etcd.main.backup.bucketName
		noGarden   bool
		deleting   bool
		prefix     string // where the garden's etcd writes
		wantErr    error  // nil: done, the garden's snapshots deleted
	}{
		{name: "garden being deleted", bucketName: new(testBucket), deleting: true, prefix: operatorv1alpha1.VirtualGardenETCDMain + "/"},
		{name: "garden being deleted, bucket with a path", bucketName: new(testBucket + "/landscape"), deleting: true, prefix: "landscape/" + operatorv1alpha1.VirtualGardenETCDMain + "/"},
		{name: "garden live", bucketName: new(testBucket + "/landscape"), prefix: "landscape/" + operatorv1alpha1.VirtualGardenETCDMain + "/", wantErr: &entryinfo.GardenKeptError{}},
		{name: "garden gone, configured bucket", noGarden: true, prefix: operatorv1alpha1.VirtualGardenETCDMain + "/", wantErr: &entryinfo.LocationError{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEntryFixture(t, false)
			ctx := context.Background()
			gardenKeys, others := gardenBucketKeys(c.prefix)
			for _, k := range append(slices.Clone(gardenKeys), others...) {
				if err := f.mem.PutObject(ctx, testBucket, k, []byte("snapshot")); err != nil {
					t.Fatal(err)
				}
			}
			if !c.noGarden {
				createGarden(t, f.client, gardenWith(c.bucketName, c.deleting))
			}
			be := gardenEntry(t, testBucket)
			be.Spec.SecretRef = f.be.Spec.SecretRef
			before := f.versions("")
			var err error
			for range 20 { // passes resume until done
				if err = f.delegate().Delete(ctx, logr.Discard(), be); !errors.As(err, new(*lasterror.InProgressError)) {
					break
				}
			}
			left := f.versions("")
			if c.wantErr == nil {
				if err != nil {
					t.Fatalf("Delete: %v", err)
				}
				want := slices.DeleteFunc(slices.Clone(before), func(v string) bool { return strings.HasPrefix(v, c.prefix) })
				if !slices.Equal(left, want) || len(want) != len(before)-len(gardenKeys) {
					t.Fatalf("left %v; want exactly the garden's snapshots %v gone", left, gardenKeys)
				}
				for _, k := range others {
					if !slices.ContainsFunc(left, func(v string) bool { return strings.HasPrefix(v, k+"@") }) {
						t.Fatalf("%s was deleted: it is not the garden's", k)
					}
				}
				return
			}
			if got, want := fmt.Sprintf("%T", kindOf(err)), fmt.Sprintf("%T", c.wantErr); got != want {
				t.Fatalf("Delete: %v (%s); want %s", err, got, want)
			}
			if cs := codes(err); !slices.Equal(cs, []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) {
				t.Fatalf("codes %v; want ERR_CONFIGURATION_PROBLEM", cs)
			}
			if !slices.Equal(left, before) {
				t.Fatalf("a kept entry's deletion deleted %v", slices.DeleteFunc(before, func(v string) bool { return slices.Contains(left, v) }))
			}
			if ev := f.events(); len(ev) == 0 || !strings.Contains(ev[len(ev)-1], ReasonBackupsKept) {
				t.Fatalf("events %v; want %s", ev, ReasonBackupsKept)
			}
		})
	}
}

// kindOf is the location error in err: a *GardenKeptError or a *LocationError (nil: neither).
func kindOf(err error) error {
	if kept := (*entryinfo.GardenKeptError)(nil); errors.As(err, &kept) {
		return kept
	}
	if loc := (*entryinfo.LocationError)(nil); errors.As(err, &loc) {
		return loc
	}
	return nil
}

// TestGardenSnapshotsNotExpected: a garden's entry is excused by its Garden (gone or being
// deleted), never by a shoot's Cluster: a Cluster "garden" does not exist, and a live garden with
// old snapshots is stale.
func TestGardenSnapshotsNotExpected(t *testing.T) {
	for _, c := range []struct {
		name       string
		garden     *operatorv1alpha1.Garden
		wantReason string
	}{
		{name: "live", garden: gardenWith(nil, false)},
		{name: "being deleted", garden: gardenWith(nil, true), wantReason: entryinfo.ReasonGardenGone},
		{name: "gone", wantReason: entryinfo.ReasonGardenGone},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newEntryFixture(t, false)
			if c.garden != nil {
				createGarden(t, f.client, c.garden)
			}
			reason, message, err := entryinfo.SnapshotsNotExpected(context.Background(), f.client, gardenEntry(t, "garden-"+gardenUIDValue))
			if err != nil || reason != c.wantReason {
				t.Fatalf("SnapshotsNotExpected = %q (%s), %v; want %q", reason, message, err, c.wantReason)
			}
		})
	}
}

// TestOrphanGuardLocatesTheGardensSnapshots: the garden's entry whose credentials secret is gone
// is deleted by the orphan guard where its snapshots are, with the BackupBucket's credentials,
// and only once its Garden is being deleted; before, nothing is deleted and the entry is kept.
func TestOrphanGuardLocatesTheGardensSnapshots(t *testing.T) {
	f := newEntryFixture(t, false)
	ctx := context.Background()
	f.orphan(false, []string{entryinfo.FinalizerName}, true, true) // the BackupBucket and its secret
	gardenKeys, others := gardenBucketKeys(operatorv1alpha1.VirtualGardenETCDMain + "/")
	for _, k := range append(slices.Clone(gardenKeys), others...) {
		if err := f.mem.PutObject(ctx, testBucket, k, []byte("snapshot")); err != nil {
			t.Fatal(err)
		}
	}
	garden := gardenWith(new(testBucket), false)
	createGarden(t, f.client, garden)
	be := gardenEntry(t, testBucket)
	be.Spec.SecretRef.Namespace, be.Spec.SecretRef.Name = "garden", "entry-credentials-gone"
	be.Finalizers = []string{entryinfo.FinalizerName}
	if err := f.client.Create(ctx, be); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(ctx, be); err != nil {
		t.Fatal(err)
	}
	before := f.versions("")
	reconcileGuard := func() error {
		_, err := f.guard().Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: be.Name}})
		return err
	}

	err := reconcileGuard()
	if !errors.As(err, new(*entryinfo.GardenKeptError)) || !slices.Equal(codes(err), []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) {
		t.Fatalf("Reconcile = %v (codes %v); want the garden's backups kept with ERR_CONFIGURATION_PROBLEM", err, codes(err))
	}
	if left := f.versions(""); !slices.Equal(left, before) {
		t.Fatalf("the guard deleted while the Garden lives: left %v", left)
	}
	if ev := f.events(); len(ev) == 0 || !strings.Contains(ev[len(ev)-1], ReasonBackupsKept) {
		t.Fatalf("events %v; want %s", ev, ReasonBackupsKept)
	}

	if err := f.client.Delete(ctx, garden); err != nil {
		t.Fatal(err)
	}
	if err := reconcileGuard(); err != nil {
		t.Fatalf("Reconcile with the Garden being deleted: %v", err)
	}
	want := slices.DeleteFunc(slices.Clone(before), func(v string) bool { return strings.HasPrefix(v, operatorv1alpha1.VirtualGardenETCDMain+"/") })
	if left := f.versions(""); !slices.Equal(left, want) || len(want) != len(before)-len(gardenKeys) {
		t.Fatalf("left %v; want exactly the garden's snapshots %v gone", left, gardenKeys)
	}
	if ev := f.events(); len(ev) == 0 || !strings.Contains(ev[len(ev)-1], operatorv1alpha1.VirtualGardenETCDMain+"/") {
		t.Fatalf("events %v; want the deletion naming the garden's prefix", ev)
	}
}
