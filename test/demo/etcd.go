// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// runner lets the demo, a program, use the test stack's etcd and etcd-backup-restore helpers,
// which are written for tests: Fatal ends the demo (run turns it into its error), TempDir and
// Cleanup work as in a test. The embedded testing.TB is never called; it only completes the
// interface.
type runner struct {
	testing.TB

	dir      string
	temps    int
	cleanups []func()
}

// fatal is what runner's Fatal panics with, for run to recover.
type fatal struct{ msg string }

func (r *runner) Helper()                           {}
func (r *runner) Fatal(args ...any)                 { panic(fatal{fmt.Sprint(args...)}) }
func (r *runner) Fatalf(format string, args ...any) { panic(fatal{fmt.Sprintf(format, args...)}) }
func (r *runner) Logf(format string, args ...any)   { detail(format, args...) }
func (r *runner) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }

func (r *runner) TempDir() string {
	r.temps++
	dir := filepath.Join(r.dir, fmt.Sprintf("tmp-%d", r.temps))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.Fatal(err)
	}
	return dir
}

// cleanup runs the registered cleanups, the last first.
func (r *runner) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
}

// shootEtcd is what the demo's shoot holds: keys written into its etcd, and the snapshots the
// real etcd-backup-restore took of it.
type shootEtcd struct {
	keys      map[string]string
	snapshots []string
	// objects is every object under the entry's prefix: the snapshots, and the segments some
	// stores' snapshots are uploaded in (Swift: a manifest and its chunks).
	objects int
}

// backUp runs a real etcd with etcd-backup-restore beside it, the etcd-backup secret mounted as
// etcd-druid mounts it, writes keys one by one and waits until a snapshot in the bucket covers
// each write: a full snapshot first, delta snapshots after it.
func backUp(ctx context.Context, r *runner, store conformance.Stores, consumer stack.Consumer, etcdBackup map[string][]byte, bucket, entry string, writes int) (*shootEtcd, error) {
	db := stack.StartEtcd(r, filepath.Join(r.TempDir(), "etcd"))
	defer db.Stop()
	mount := r.TempDir()
	stack.MountSecret(r, mount, etcdBackup)
	sidecar := consumer.Snapshotter(r, db, mount, bucket, entry)
	defer sidecar.Stop()
	detail("etcd on %s; etcdbrctl snapshot (%s) with the secret mounted at %s; its log: %s", db.URL, consumer.StorageProvider, mount, sidecar.LogPath())

	shoot := &shootEtcd{keys: map[string]string{}}
	prefix := entry + "/etcd-main/"
	for i := 1; i <= writes; i++ {
		key, value := fmt.Sprintf("/registry/demo/key-%d", i), fmt.Sprintf("value %d written at %s", i, time.Now().UTC().Format(time.RFC3339))
		rev := db.PutRev(r, key, value)
		shoot.keys[key] = value
		// A failure ends the demo (runner.Fatal) with the sidecar's log.
		framework.WaitCovered(r, ctx, store, sidecar, bucket, prefix, rev)
	}
	sidecar.Stop()
	keys, err := conformance.ListKeys(ctx, store, bucket, prefix)
	if err != nil {
		return nil, err
	}
	shoot.objects = len(keys)
	for _, k := range keys {
		if _, _, ok := stack.SnapshotEndRevision(k); ok {
			shoot.snapshots = append(shoot.snapshots, k)
		}
	}
	return shoot, nil
}

// restore runs `etcdbrctl restore` from the entry's snapshots into a new data directory, starts
// etcd on it and checks that it holds every key written.
func restore(r *runner, consumer stack.Consumer, etcdBackup map[string][]byte, bucket, entry string, shoot *shootEtcd) error {
	mount := r.TempDir()
	stack.MountSecret(r, mount, etcdBackup)
	dataDir := consumer.Restore(r, mount, bucket, entry)
	db := stack.StartEtcd(r, dataDir)
	defer db.Stop()
	keys := make([]string, 0, len(shoot.keys))
	for k := range shoot.keys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if got := db.Get(r, k); got != shoot.keys[k] {
			return fmt.Errorf("the restored etcd holds %s = %q; want %q", k, got, shoot.keys[k])
		}
	}
	detail("etcd restored into %s holds all %d keys written before, with their values", dataDir, len(keys))
	return nil
}
