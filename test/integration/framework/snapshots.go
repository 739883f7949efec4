// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// WaitCovered waits (a minute at most) until a snapshot under prefix in bucket covers revision
// rev, failing t when the sidecar exits first or none does in time (with the sidecar's log).
func WaitCovered(t testing.TB, ctx context.Context, store objectstore.DataPlane, sidecar *stack.Process, bucket, prefix string, rev int64) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if sidecar.Exited() {
			t.Fatalf("etcd-backup-restore exited (%v):\n%s", sidecar.Err(), sidecar.Tail())
		}
		covered := false
		if err := store.ListObjects(ctx, bucket, prefix, func(page []objectstore.ObjectVersion) error {
			for _, o := range page {
				if end, _, ok := stack.SnapshotEndRevision(o.Key); ok && end >= rev {
					covered = true
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if covered {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot under %s covers revision %d after a minute; etcd-backup-restore's log:\n%s", prefix, rev, sidecar.Tail())
		}
	}
}

// ListAll lists every object version in bucket.
func ListAll(t testing.TB, ctx context.Context, store objectstore.DataPlane, bucket string) []objectstore.ObjectVersion {
	t.Helper()
	var all []objectstore.ObjectVersion
	if err := store.ListObjects(ctx, bucket, "", func(p []objectstore.ObjectVersion) error {
		all = append(all, p...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return all
}

// CountSnapshots counts the full and delta snapshots of the entry's etcd-main in bucket.
func CountSnapshots(t *testing.T, store objectstore.DataPlane, bucket, entry string) (full, delta int) {
	t.Helper()
	keys, err := conformance.ListKeys(Ctx(t), store, bucket, entry+"/etcd-main/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		switch base := k[strings.LastIndex(k, "/")+1:]; {
		case strings.HasPrefix(base, "Full-"):
			full++
		case strings.HasPrefix(base, "Incr-"):
			delta++
		}
	}
	return full, delta
}
