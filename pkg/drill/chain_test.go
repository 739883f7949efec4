// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/snapshotname"
)

func obj(key string) objectstore.ObjectVersion {
	return objectstore.ObjectVersion{Key: key, Size: 10}
}

func full(last, unix int64) objectstore.ObjectVersion {
	return obj(fmt.Sprintf("shoot--a--b--x/etcd-main/v2/Full-00000000-%08d-%d.gz", last, unix))
}

func delta(start, last, unix int64) objectstore.ObjectVersion {
	return obj(fmt.Sprintf("shoot--a--b--x/etcd-main/v2/Incr-%08d-%08d-%d.gz", start, last, unix))
}

func TestCheckChains(t *testing.T) {
	const prefix = "shoot--a--b--x/"
	noncurrent := delta(11, 20, 110)
	noncurrent.Noncurrent = true
	tests := []struct {
		name       string
		objects    []objectstore.ObjectVersion
		wantReason Reason
		wantFull   int64 // last revision of the selected full, -1 none
		wantDeltas int
		wantLast   int64
	}{
		{"full alone", []objectstore.ObjectVersion{full(10, 100)}, "", 10, 0, 10},
		{"full and deltas", []objectstore.ObjectVersion{full(10, 100), delta(11, 20, 110), delta(21, 30, 120)}, "", 10, 2, 30},
		{"listing order does not matter", []objectstore.ObjectVersion{delta(21, 30, 120), full(10, 100), delta(11, 20, 110)}, "", 10, 2, 30},
		{"newest full, older chain ignored", []objectstore.ObjectVersion{full(5, 50), delta(6, 10, 60), delta(11, 20, 110), full(20, 200), delta(21, 30, 210)}, "", 20, 1, 30},
		{"full without changes since the last delta comes last", []objectstore.ObjectVersion{full(5, 50), delta(6, 10, 60), full(10, 60)}, "", 10, 0, 10},
		{"v1 layout", []objectstore.ObjectVersion{obj(prefix + "etcd-main/v1/Backup-100/Full-00000000-00000010-100"), obj(prefix + "etcd-main/v1/Backup-100/Incr-00000011-00000020-110")}, "", 10, 1, 20},
		{"chunks and other keys are no snapshots", []objectstore.ObjectVersion{full(10, 100), obj(prefix + "etcd-main/v2/Full-00000000-00000010-100.gz/0000000001"), obj(prefix + "etcd-main/other"), delta(11, 20, 110)}, "", 10, 1, 20},
		{"noncurrent versions are not read", []objectstore.ObjectVersion{full(10, 100), noncurrent}, "", 10, 0, 10},
		{"no full snapshot", []objectstore.ObjectVersion{delta(11, 20, 110), delta(21, 30, 120)}, ReasonNoFullSnapshot, -1, 2, 30},
		{"gap: a missing middle delta", []objectstore.ObjectVersion{full(10, 100), delta(11, 20, 110), delta(31, 40, 130)}, ReasonChainBroken, 10, 2, 40},
		{"gap after the full", []objectstore.ObjectVersion{full(10, 100), delta(12, 20, 110)}, ReasonChainBroken, 10, 1, 20},
		{"overlap: a second writer", []objectstore.ObjectVersion{full(10, 100), delta(11, 20, 110), delta(15, 25, 111), delta(21, 30, 120)}, ReasonChainBroken, 10, 3, 30},
		{"delta starting inside its full", []objectstore.ObjectVersion{full(10, 100), delta(8, 20, 110)}, ReasonChainBroken, 10, 1, 20},
		{"delta written after its full, ending before it", []objectstore.ObjectVersion{full(10, 100), delta(1, 8, 105)}, ReasonChainBroken, 10, 0, 10},
		{"older deltas before the full are fine", []objectstore.ObjectVersion{delta(1, 8, 90), full(10, 100)}, "", 10, 0, 10},
		{"unknown compression", []objectstore.ObjectVersion{full(10, 100), obj(prefix + "etcd-main/v2/Incr-00000011-00000020-110.lz4")}, ReasonUndecodable, 10, 1, 20},
		{"final full snapshot", []objectstore.ObjectVersion{obj(prefix + "etcd-main/v2/Full-00000000-00000010-100.gz.final")}, "", 10, 0, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chains := checkChains(t, prefix, tt.objects)
			if len(chains) != 1 {
				t.Fatalf("chains: %d, want 1", len(chains))
			}
			ch := chains[0]
			if ch.Etcd != "etcd-main" {
				t.Errorf("etcd %q", ch.Etcd)
			}
			if got := ReasonOf(ch.Err); got != tt.wantReason {
				t.Errorf("reason %q, want %q (%v)", got, tt.wantReason, ch.Err)
			}
			if tt.wantReason != "" && !errors.Is(ch.Err, sentinels[tt.wantReason]) {
				t.Errorf("errors.Is(%v, sentinel of %s) is false", ch.Err, tt.wantReason)
			}
			switch {
			case tt.wantFull < 0 && ch.Full != nil:
				t.Errorf("full %s, want none", ch.Full.Key)
			case tt.wantFull >= 0 && (ch.Full == nil || ch.Full.LastRevision != tt.wantFull):
				t.Errorf("full %+v, want one ending at %d", ch.Full, tt.wantFull)
			}
			if len(ch.Deltas) != tt.wantDeltas || ch.LastRevision() != tt.wantLast {
				t.Errorf("%d deltas ending at %d, want %d ending at %d", len(ch.Deltas), ch.LastRevision(), tt.wantDeltas, tt.wantLast)
			}
		})
	}
}

func TestCheckChainsSeveralEtcds(t *testing.T) {
	chains := checkChains(t, "e/", []objectstore.ObjectVersion{
		obj("e/etcd-main/v2/Full-00000000-00000010-100"),
		obj("e/etcd-events/v2/Incr-00000011-00000020-110"),
		obj("e/etcd-events/v2/Full-00000000-00000010-100"),
		obj("other/etcd-main/v2/Full-00000000-00000010-100"),
	})
	if len(chains) != 2 || chains[0].Etcd != "etcd-events" || chains[1].Etcd != "etcd-main" {
		t.Fatalf("chains %+v", chains)
	}
	if chains[0].Err != nil || len(chains[0].Deltas) != 1 || chains[1].Err != nil || chains[1].Size() != 10 {
		t.Fatalf("chains %+v", chains)
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		key  string
		ok   bool
		want Snapshot
	}{
		{"e/etcd-main/v2/Full-00000000-00000010-100.gz", true, Snapshot{Name: snapshotname.Name{Etcd: "etcd-main", Kind: KindFull, LastRevision: 10, Compression: ".gz"}}},
		{"e/etcd-main/v2/Incr-00000011-00000020-110", true, Snapshot{Name: snapshotname.Name{Etcd: "etcd-main", Kind: KindDelta, StartRevision: 11, LastRevision: 20}}},
		{"e/etcd-main/v2/Full-00000000-00000010-100.zlib.final", true, Snapshot{Name: snapshotname.Name{Etcd: "etcd-main", Kind: KindFull, LastRevision: 10, Compression: ".zlib", Final: true}}},
		{"e/etcd-main/v2/Full-00000000-00000010-100.final", true, Snapshot{Name: snapshotname.Name{Etcd: "etcd-main", Kind: KindFull, LastRevision: 10, Final: true}}},
		{"e/etcd-main/v2/Incr-00000021-00000020-110", false, Snapshot{}},
		{"e/etcd-main/v2/Snap-00000000-00000020-110", false, Snapshot{}},
		{"e/etcd-main/v2/Full-00000000-00000010-100.gz.x.final", false, Snapshot{}},
		{"e/etcd-v1/v2/Full-00000000-00000010-100", true, Snapshot{Name: snapshotname.Name{Etcd: "etcd-v1", Kind: KindFull, LastRevision: 10}}},
		{"x/etcd-main/v2/Full-00000000-00000010-100", false, Snapshot{}},
	}
	for _, tt := range tests {
		got, ok := ParseKey("e/", tt.key)
		if ok != tt.ok {
			t.Errorf("%s: ok %v", tt.key, ok)
			continue
		}
		if !ok {
			continue
		}
		if got.Etcd != tt.want.Etcd || got.Kind != tt.want.Kind || got.StartRevision != tt.want.StartRevision || got.LastRevision != tt.want.LastRevision || got.Compression != tt.want.Compression || got.Final != tt.want.Final || got.Key != tt.key {
			t.Errorf("%s: %+v, want %+v", tt.key, got, tt.want)
		}
	}
}
