// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package consumer_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/inventory"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// saved is the sidecar's log line for each snapshot it uploaded (snapshotter.go:382 and :511 in
// v0.43.0); v2 snapshots have no directory, so the path is the snapshot's name.
var saved = regexp.MustCompile(`Successfully saved (full|delta) snapshot at: ([^"\s]+)`)

// snapshotName is the grammar written again here, independently of the inventory's parser, to
// read a snapshot's time from its name and to tell snapshots from chunks in a plain listing.
var snapshotName = regexp.MustCompile(`^(Full|Incr)-\d+-\d+-(\d+)(\.gz|\.Z|\.zlib)?(\.final)?$`)

// checkInventory takes the entry's inventory with the entry's credential after the sidecar
// stopped (so that nothing changes under it) and checks it against the sidecar's own word on the
// snapshots it wrote and against a plain listing of the entry.
func checkInventory(t *testing.T, store objectstore.DataPlane, bucket, entry string, sidecar *stack.Process) {
	t.Helper()
	ctx := framework.Ctx(t)
	prefix := entry + "/"
	now := time.Now()
	inv, err := inventory.Take(ctx, store, bucket, prefix, now)
	if err != nil {
		t.Fatalf("inventory.Take: %v", err)
	}

	// What the sidecar says it wrote last, of each kind.
	log, err := os.ReadFile(sidecar.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]string{}
	for _, m := range saved.FindAllStringSubmatch(string(log), -1) {
		last[m[1]] = prefix + "etcd-main/v2/" + m[2]
	}
	if last["full"] == "" || last["delta"] == "" {
		t.Fatalf("the sidecar's log names no full or no delta snapshot (%v):\n%s", last, sidecar.Tail())
	}

	// A plain listing: every version's size, current objects, and the bytes of each snapshot
	// read back (a lower bound of what the listing must report; a Swift manifest lists as 0
	// bytes, its segment holds them).
	var versions, objects, bytes, snapshotBytes int64
	err = store.ListObjects(ctx, bucket, prefix, func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			versions++
			bytes += o.Size
			if o.Noncurrent {
				continue
			}
			objects++
			if snapshotName.MatchString(o.Key[strings.LastIndex(o.Key, "/")+1:]) {
				data, err := objectstore.ReadObject(ctx, store, bucket, o.Key)
				if err != nil {
					return err
				}
				snapshotBytes += int64(len(data))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	if len(inv.Etcds) != 1 || inv.Etcds[0].Name != "etcd-main" {
		t.Fatalf("inventory's etcds are %+v; want exactly etcd-main", inv.Etcds)
	}
	e := inv.Etcds[0]
	for kind, got := range map[string]*inventory.Snapshot{"full": e.LatestFull, "delta": e.LatestDelta} {
		want := last[kind]
		if got == nil || got.Key != want {
			t.Errorf("inventory's newest %s snapshot is %+v; the sidecar last wrote %s", kind, got, want)
			continue
		}
		m := snapshotName.FindStringSubmatch(want[strings.LastIndex(want, "/")+1:])
		if m == nil {
			t.Errorf("the sidecar's %s snapshot %s does not match the name grammar", kind, want)
			continue
		}
		unix, _ := strconv.ParseInt(m[2], 10, 64)
		if got.Time.Unix() != unix {
			t.Errorf("inventory's %s snapshot time is %v; its name says %v", kind, got.Time, time.Unix(unix, 0).UTC())
		}
	}
	if inv.Objects != objects || inv.Versions != versions || inv.Bytes != bytes {
		t.Errorf("inventory counts %d objects, %d versions, %d bytes; a plain listing %d, %d, %d",
			inv.Objects, inv.Versions, inv.Bytes, objects, versions, bytes)
	}
	// Not weakened for a store whose listing does not fill Size yet: that fails here.
	if inv.Bytes < snapshotBytes || inv.Bytes == 0 {
		t.Errorf("inventory counts %d bytes; the snapshots read back hold %d", inv.Bytes, snapshotBytes)
	}
	if inv.Pages < 1 || !inv.CountedAt.Time.Equal(now) {
		t.Errorf("inventory read %d pages, counted at %v; want at least one page at %v", inv.Pages, inv.CountedAt, now)
	}
	t.Logf("inventory of %s: %d objects, %d versions, %d bytes, %d pages; the sidecar last wrote %s and %s",
		prefix, inv.Objects, inv.Versions, inv.Bytes, inv.Pages, last["full"], last["delta"])
}
