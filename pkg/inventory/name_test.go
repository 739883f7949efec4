// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"testing"
	"time"
)

func TestParseName(t *testing.T) {
	at := func(unix int64) time.Time { return time.Unix(unix, 0).UTC() }
	tests := []struct {
		rel  string
		want name
		ok   bool
	}{
		// v2, as v0.43.0 writes them: %08d revisions, Unix seconds, compression suffix, final.
		{"etcd-main/v2/Full-00000000-00000001-1700000000.gz", name{"etcd-main", kindFull, 1, at(1700000000)}, true},
		{"etcd-main/v2/Incr-00000002-00000009-1700000060.gz", name{"etcd-main", kindDelta, 9, at(1700000060)}, true},
		{"etcd-main/v2/Full-00000000-00000001-1700000000", name{"etcd-main", kindFull, 1, at(1700000000)}, true},
		{"etcd-main/v2/Full-00000000-00000001-1700000000.Z", name{"etcd-main", kindFull, 1, at(1700000000)}, true},
		{"etcd-main/v2/Full-00000000-00000001-1700000000.zlib", name{"etcd-main", kindFull, 1, at(1700000000)}, true},
		{"etcd-main/v2/Full-00000000-00000001-1700000000.gz.final", name{"etcd-main", kindFull, 1, at(1700000000)}, true},
		{"etcd-main/v2/Full-00000000-00000001-1700000000.final", name{"etcd-main", kindFull, 1, at(1700000000)}, true},
		{"etcd-events/v2/Incr-00000010-00000012-1700000100", name{"etcd-events", kindDelta, 12, at(1700000100)}, true},
		// Revisions past 8 digits are longer, not truncated.
		{"etcd-main/v2/Full-00000000-123456789-1700000000.gz", name{"etcd-main", kindFull, 123456789, at(1700000000)}, true},
		// v1: one directory Backup-<unix> between the layout and the snapshot.
		{"etcd-main/v1/Backup-1600000000/Full-00000000-00000005-1600000000", name{"etcd-main", kindFull, 5, at(1600000000)}, true},
		{"etcd-main/v1/Backup-1600000000/Incr-00000006-00000007-1600000030.gz", name{"etcd-main", kindDelta, 7, at(1600000030)}, true},
		// A store prefix of more than one component.
		{"a/b/v2/Full-00000000-00000001-1700000000", name{"a/b", kindFull, 1, at(1700000000)}, true},
		// "v1" inside a component is not a layout directory.
		{"etcd-v1/v2/Full-00000000-00000001-1700000000", name{"etcd-v1", kindFull, 1, at(1700000000)}, true},

		// Chunks: Swift's segments and GCS's composite parts, `<snapshot>/%010d`.
		{"etcd-main/v2/Full-00000000-00000001-1700000000.gz/0000000001", name{}, false},
		{"etcd-main/v1/Backup-1600000000/Full-00000000-00000005-1600000000/0000000002", name{}, false},
		// Not snapshots.
		{"etcd-main/v2/Chunk-00000000-00000001-1700000000", name{}, false},
		{"etcd-main/v2/Full-00000002-00000001-1700000000", name{}, false}, // start after last
		{"etcd-main/v2/Full-00000000-00000001", name{}, false},
		{"etcd-main/v2/Full-00000000-00000001-1700000000-x", name{}, false},
		{"etcd-main/v2/Full-0000000a-00000001-1700000000", name{}, false},
		{"etcd-main/v2/Full-00000000-00000001-soon", name{}, false},
		{"etcd-main/v2/Full-00000000-00000001-1700000000.bz2", name{}, false}, // cannot be restored
		{"etcd-main/v2/Full-00000000-00000001-1700000000.gz.gz", name{}, false},
		{"etcd-main/v2/Full-00000000-00000001-1700000000.", name{}, false},
		{"etcd-main/v1/Full-00000000-00000001-1700000000", name{}, false}, // v1 needs its directory
		{"etcd-main/v2/", name{}, false},
		{"v2/Full-00000000-00000001-1700000000", name{}, false}, // no etcd name
		{"etcd-main/Full-00000000-00000001-1700000000", name{}, false},
		{"etcd-main/v3/Full-00000000-00000001-1700000000", name{}, false},
		{"etcd-main/v2/a/b/Full-00000000-00000001-1700000000", name{}, false},
		{"etcd-main/v2/full-00000000-00000001-1700000000", name{}, false},
		{"readme.txt", name{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			got, ok := parseName(tt.rel)
			if ok != tt.ok || got != tt.want {
				t.Errorf("parseName(%q) = %+v, %v; want %+v, %v", tt.rel, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestParseNameRoundTrip parses what etcd-backup-restore's GenerateSnapshotName
// (pkg/types/snapstore.go:120) writes.
func TestParseNameRoundTrip(t *testing.T) {
	created := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for _, suffix := range []string{"", ".gz", ".Z", ".zlib"} {
		for _, final := range []string{"", ".final"} {
			snap := fmtSnapshot(kindFull, 42, 4242, created, suffix+final)
			got, ok := parseName("etcd-main/v2/" + snap)
			if want := (name{"etcd-main", kindFull, 4242, created}); !ok || got != want {
				t.Errorf("parseName(%q) = %+v, %v; want %+v", snap, got, ok, want)
			}
		}
	}
}
