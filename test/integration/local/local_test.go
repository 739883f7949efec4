// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	localprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// empty is Gardener's local setup's backup secret: a directory needs no credentials.
var empty = map[string][]byte{}

// TestBucketAndEntry: the bucket is a directory with the marker; the entry's etcd-backup secret
// names the bucket and the root as hostPath; deleting the entry removes exactly "<entry>/" (its
// directory too), deleting the bucket its directory.
func TestBucketAndEntry(t *testing.T) {
	bb := env.CreateBucket(t, framework.UniqueName("bucket-"), empty, configHead+`}`)
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	dir := filepath.Join(root, bb.Name)
	if fi, err := os.Stat(filepath.Join(dir, localprovider.MarkerFile)); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("bucket directory without its marker: %v", err)
	}
	shoot := framework.UniqueName("shoot--l--")
	entry := shoot + "--1"
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, entry, bb.Name, empty)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	keys, secret := env.SecretKeys(t, shoot, "etcd-backup")
	if len(keys) != 2 || string(secret.Data["hostPath"]) != root || string(secret.Data["bucketName"]) != bb.Name {
		t.Fatalf("etcd-backup holds %v (hostPath %q); want bucketName %q and hostPath %q", keys, secret.Data["hostPath"], bb.Name, root)
	}

	store := env.StoreFor(t, empty)
	neighbours := framework.FillEntry(t, store, bb.Name, entry+"/", 50)
	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	framework.AssertOnly(t, store, bb.Name, neighbours)
	if _, err := os.Lstat(filepath.Join(dir, entry)); !os.IsNotExist(err) {
		t.Fatalf("the entry's directory is left: %v", err)
	}
	env.DeleteAndWaitGone(t, bb, 2*time.Minute)
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("the bucket's directory is left: %v", err)
	}
}

// TestForeignDirectoryIsLeftAlone: a directory of the bucket's name without the marker (as
// gardener's provider-local makes them) is refused with ERR_CONFIGURATION_PROBLEM and untouched.
func TestForeignDirectoryIsLeftAlone(t *testing.T) {
	name := framework.UniqueName("foreign-")
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Join(dir, "shoot--x--1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shoot--x--1", "Full-0"), []byte("theirs"), 0o600); err != nil {
		t.Fatal(err)
	}
	bb := env.CreateBucket(t, name, empty, configHead+`}`)
	t.Cleanup(func() { env.Forget(t, bb) })
	env.WaitFor(t, bb, time.Minute, "bucket refused", framework.FailedWith(gardencorev1beta1.ErrorConfigurationProblem))
	if _, err := os.Stat(filepath.Join(dir, localprovider.MarkerFile)); !os.IsNotExist(err) {
		t.Fatalf("a marker was written into someone else's directory: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("someone else's directory was changed: %v %v", fi.Mode(), err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "shoot--x--1", "Full-0")); err != nil || string(data) != "theirs" {
		t.Fatalf("someone else's file was changed: %q %v", data, err)
	}
}

// TestBucketAvailabilityFollowsTheDirectory removes the bucket's directory behind the extension's
// back.
func TestBucketAvailabilityFollowsTheDirectory(t *testing.T) {
	env.AvailabilityFlow(t, framework.Availability{Operator: empty, Config: configHead + `}`})
}

// TestHostPathOfAnotherDirectoryIsRefused: a secret whose hostPath names another directory would
// send the backups where the extension neither lists nor deletes.
func TestHostPathOfAnotherDirectoryIsRefused(t *testing.T) {
	env.BucketsFail(t, []framework.BucketFailure{
		{Name: "other hostPath", Data: map[string][]byte{"hostPath": []byte("/elsewhere")}, ProviderConfig: configHead + `}`,
			Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "hostPath"},
		{Name: "immutability", Data: empty, ProviderConfig: configHead + `,"immutability":{"retentionType":"bucket"}}`,
			Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "providerConfig.immutability"},
	}, []string{"/elsewhere"}, func(t *testing.T, bucket string) {
		if _, err := os.Lstat(filepath.Join(root, bucket)); !os.IsNotExist(err) {
			t.Errorf("a directory was made for a refused bucket: %v", err)
		}
	})
}
