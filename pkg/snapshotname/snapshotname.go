// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package snapshotname reads etcd-backup-restore v0.43.0's snapshot object names. The inventory
// (what is under an entry, how fresh) and the restore drill (which chain to restore) read names
// with this one parser, so that they never disagree about what is a snapshot.
package snapshotname

import (
	"strconv"
	"strings"
	"time"
)

// Snapshot kinds as etcd-backup-restore names them (pkg/types/snapstore.go: SnapshotKindFull,
// SnapshotKindDelta).
const (
	KindFull  = "Full"
	KindDelta = "Incr"
)

// finalSuffix marks a full snapshot taken on request before etcd is stopped (etcd-druid asks for
// it before scaling etcd to zero, e.g. on hibernation). It is an ordinary full snapshot.
const finalSuffix = "final"

// Name is one snapshot key taken apart.
type Name struct {
	// Etcd is the store prefix below `<entry>/`, e.g. "etcd-main".
	Etcd string
	// Kind is KindFull or KindDelta.
	Kind string
	// StartRevision and LastRevision as named (a full snapshot is named from 0).
	StartRevision, LastRevision int64
	// CreatedOn is the Unix time in the name.
	CreatedOn time.Time
	// Compression is the compression suffix with its dot ("" uncompressed). Any suffix is kept,
	// as etcd-backup-restore's ParseSnapshot keeps it (pkg/snapstore/snapshot.go:116-125);
	// Restorable says whether etcd-backup-restore can decompress it.
	Compression string
	// Final marks a full snapshot taken before etcd was stopped.
	Final bool
}

// Restorable reports whether etcd-backup-restore v0.43.0 can decompress the snapshot: its
// compression suffix is one it writes (pkg/compressor/types.go:22-28; IsSnapshotCompressed in
// pkg/compressor/compressor.go:124 rejects every other one).
func (n Name) Restorable() bool {
	switch n.Compression {
	case "", ".gz", ".Z", ".zlib":
		return true
	}
	return false
}

// Parse parses rel, a key with `<entry>/` already cut off, the way etcd-backup-restore's
// snapstore.ParseSnapshot (pkg/snapstore/snapshot.go:34) reads it, with two deliberate
// differences: the layout directory must be a whole path component ("etcd-v1/v2/Full-..." is
// etcd "etcd-v1" in layout v2, where etcd-backup-restore's strings.LastIndex("v1/") would see a
// v1 layout), and a v2 name with two more path components, which etcd-backup-restore
// accidentally reads as a snapshot but never writes, is not one. Chunks (the segments of
// Swift's dynamic large objects and GCS's composite uploads, written as `<snapshot>/%010d`) are
// not snapshots: etcd-backup-restore skips them too (IsChunk).
//
//	v2: <etcd>/v2/<snapshot>
//	v1: <etcd>/v1/<any directory, written as Backup-<unix>>/<snapshot>
//	<snapshot>: <Full|Incr>-<startRev>-<lastRev>-<unix>[.<compression>][.final]
//
// Revisions are written %08d but read as any base-10 integer; startRev <= lastRev.
func Parse(rel string) (Name, bool) {
	// etcd-backup-restore looks for v1 first, then v2, each the last occurrence.
	etcd, layout, rest, ok := cutLayout(rel, "v1")
	if !ok {
		if etcd, layout, rest, ok = cutLayout(rel, "v2"); !ok {
			return Name{}, false
		}
	}
	parts := strings.Split(rest, "/")
	var snap string
	switch {
	case layout == "v2" && len(parts) == 1:
		snap = parts[0]
	case layout == "v1" && len(parts) == 2 && parts[0] != "":
		snap = parts[1]
	default: // chunks (one component more) and anything else
		return Name{}, false
	}

	tokens := strings.Split(snap, "-")
	if len(tokens) != 4 || (tokens[0] != KindFull && tokens[0] != KindDelta) {
		return Name{}, false
	}
	start, err := strconv.ParseInt(tokens[1], 10, 64)
	if err != nil {
		return Name{}, false
	}
	last, err := strconv.ParseInt(tokens[2], 10, 64)
	if err != nil || start > last {
		return Name{}, false
	}
	n := Name{Etcd: etcd, Kind: tokens[0], StartRevision: start, LastRevision: last}
	// <unix>[.<compression>][.final]
	fields := strings.Split(tokens[3], ".")
	if k := len(fields); k > 1 && fields[k-1] == finalSuffix {
		n.Final = true
		fields = fields[:k-1]
	}
	switch len(fields) {
	case 1:
	case 2:
		n.Compression = "." + fields[1]
	default:
		return Name{}, false
	}
	unix, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return Name{}, false
	}
	n.CreatedOn = time.Unix(unix, 0).UTC()
	return n, true
}

// cutLayout splits rel at the last "/<layout>/": the etcd's name before it (not empty) and the
// rest after it.
func cutLayout(rel, layout string) (etcd, found, rest string, ok bool) {
	i := strings.LastIndex(rel, "/"+layout+"/")
	if i <= 0 {
		return "", "", "", false
	}
	return rel[:i], layout, rel[i+len(layout)+2:], true
}
