// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gardenlet_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestProviders is gardener in the loop for every provider: gardenlet's own BackupBucket and
// BackupEntry controllers, two seeds per provider (each its own API server, the provider's real
// binary and gardenlet for that seed), one set of cases for all. Providers run one after the
// other; each provider's world starts once for its cases (aws's is TestMain's).
func TestProviders(t *testing.T) {
	requireStack(t)
	cases := []struct {
		name string
		run  func(t *testing.T, p *providerWorld)
	}{
		{"bucket and entry lifecycle with etcd-backup-restore", entryLifecycle},
		{"migration there and back, retention-locked source bucket", func(t *testing.T, p *providerWorld) {
			if p.lockedConfig == "" {
				t.Skip(p.noLock)
			}
			thereAndBack(t, p, p.lockedConfig)
		}},
		{"migration there and back", func(t *testing.T, p *providerWorld) {
			if p.lockedConfig != "" {
				t.Skip("the locked case runs the same steps on a locked source bucket")
			}
			thereAndBack(t, p, p.bucketConfig)
		}},
	}
	for _, spec := range worldSpecs {
		t.Run(spec.typ, func(t *testing.T) {
			p := spec.start(t)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, p) })
			}
		})
	}
}

// entryLifecycle: a core BackupBucket on seed a becomes Succeeded through gardenlet and the
// provider's binary; a core BackupEntry's etcd-backup is proven by the real etcd-backup-restore
// (a full snapshot, restored by etcdbrctl); deleting the entry empties its prefix only, and
// deleting the bucket removes it from the store.
func entryLifecycle(t *testing.T, p *providerWorld) {
	a, b := p.a, p.b
	operator := p.operator()
	bb := coreBucketFor(t, p.typ, p.region, operator, a.name, p.bucketConfig)
	waitBucket(t, bb.Name, 3*time.Minute, "Succeeded on "+a.name, bucketSucceeded)
	if err := a.client.Get(ctx(), client.ObjectKey{Name: bb.Name}, &extensionsv1alpha1.BackupBucket{}); err != nil {
		t.Fatalf("gardenlet on %s created no extension BackupBucket: %v", a.name, err)
	}
	if err := b.client.Get(ctx(), client.ObjectKey{Name: bb.Name}, &extensionsv1alpha1.BackupBucket{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the extension BackupBucket exists on %s too (%v)", b.name, err)
	}
	seedCopy := secretData(t, a.client, gardenNamespace, "bucket-"+bb.Name)
	for k, v := range operator {
		if !bytes.Equal(seedCopy[k], v) {
			t.Errorf("gardenlet's seed copy of the operator's credentials differs in key %q", k)
		}
	}
	store := p.storeFor(t, operator)

	s := newShootOn(t, a.client)
	entry := coreEntry(t, s, "", bb.Name, a.name, nil)
	waitEntry(t, s.entryKey(), 2*time.Minute, "Succeeded on "+a.name, entrySucceeded(""))
	etcdBackup := secretData(t, a.client, s.technicalID(), "etcd-backup")
	if got := string(etcdBackup["bucketName"]); got != bb.Name {
		t.Fatalf("etcd-backup names bucket %q; want %q", got, bb.Name)
	}
	keys := snapshotWith(t, p.storeFor, p.consumer, etcdBackup, bb.Name, entry.Name)
	h := &etcdHistory{storeFor: p.storeFor, consumer: p.consumer, entry: entry.Name}
	db := startEtcdOn(t, h.restore(t, etcdBackup))
	if got := db.Get(t, "/registry/gardenlet-e2e"); got != "1" {
		t.Errorf("etcd restored by etcdbrctl from bucket %s holds /registry/gardenlet-e2e = %q; want \"1\"", bb.Name, got)
	}
	db.Stop()
	t.Logf("etcd-backup-restore wrote %v into bucket %s and restored from it", keys, bb.Name)

	// Deleting the entry empties its prefix only.
	neighbour := newShootOn(t, a.client).entryName() + "/etcd-main/v2/Full-00000001-00000002-1"
	if err := store.PutObject(ctx(), bb.Name, neighbour, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := garden.Delete(ctx(), entry); err != nil {
		t.Fatal(err)
	}
	waitGone(t, garden, entry, 2*time.Minute, "gardenlet finishes the core BackupEntry's deletion")
	waitGone(t, a.client, &extensionsv1alpha1.BackupEntry{ObjectMeta: entry.ObjectMeta}, 10*time.Second, "the extension BackupEntry is gone")
	waitGone(t, a.client, secretKey(s.technicalID(), "etcd-backup"), 10*time.Second, "etcd-backup is gone")
	framework.AssertOnly(t, store, bb.Name, []string{neighbour})

	// Deleting the bucket removes it.
	if err := garden.Delete(ctx(), bb); err != nil {
		t.Fatal(err)
	}
	waitGone(t, garden, bb, 3*time.Minute, "gardenlet finishes the core BackupBucket's deletion")
	waitGone(t, a.client, &extensionsv1alpha1.BackupBucket{ObjectMeta: bb.ObjectMeta}, 10*time.Second, "the extension BackupBucket is gone")
	eventually(t, time.Minute, "bucket "+bb.Name+" is gone from the store", func() (bool, string) {
		err := store.Probe(ctx(), bb.Name)
		return errors.Is(err, objectstore.ErrBucketNotFound), fmt.Sprintf("probe: %v", err)
	})
}
