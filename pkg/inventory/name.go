package inventory

import (
	"strconv"
	"strings"
	"time"
)

// Snapshot kinds as etcd-backup-restore names them (pkg/types/snapstore.go: SnapshotKindFull,
// SnapshotKindDelta).
const (
	kindFull  = "Full"
	kindDelta = "Incr"
)

// finalSuffix marks a full snapshot taken on request before etcd is stopped (etcd-druid asks
// for it before scaling etcd to zero, e.g. on hibernation). It is an ordinary full snapshot.
const finalSuffix = "final"

// compressionSuffixes are the suffixes etcd-backup-restore v0.43.0 writes and can restore
// (pkg/compressor/types.go; IsSnapshotCompressed rejects every other one, so a snapshot with
// another suffix could not be restored and is not counted).
var compressionSuffixes = map[string]bool{"": true, "gz": true, "Z": true, "zlib": true}

// name is one snapshot key taken apart.
type name struct {
	etcd      string // the store prefix below `<entry>/`, e.g. "etcd-main"
	kind      string // kindFull or kindDelta
	lastRev   int64
	createdOn time.Time
}

// parseName parses rel, a key with `<entry>/` already cut off, the way etcd-backup-restore's
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
//	<snapshot>: <Full|Incr>-<startRev>-<lastRev>-<unix>[.<gz|Z|zlib>][.final]
//
// Revisions are written %08d but read as any base-10 integer; startRev <= lastRev.
func parseName(rel string) (name, bool) {
	// etcd-backup-restore looks for v1 first, then v2, each the last occurrence.
	etcd, layout, rest, ok := cutLayout(rel, "v1")
	if !ok {
		if etcd, layout, rest, ok = cutLayout(rel, "v2"); !ok {
			return name{}, false
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
		return name{}, false
	}

	tokens := strings.Split(snap, "-")
	if len(tokens) != 4 || (tokens[0] != kindFull && tokens[0] != kindDelta) {
		return name{}, false
	}
	startRev, err := strconv.ParseInt(tokens[1], 10, 64)
	if err != nil {
		return name{}, false
	}
	lastRev, err := strconv.ParseInt(tokens[2], 10, 64)
	if err != nil || startRev > lastRev {
		return name{}, false
	}
	// <unix>[.<compression>][.final]
	timeAndSuffixes := strings.Split(tokens[3], ".")
	suffixes := timeAndSuffixes[1:]
	if n := len(suffixes); n > 0 && suffixes[n-1] == finalSuffix {
		suffixes = suffixes[:n-1]
	}
	switch {
	case len(suffixes) > 1:
		return name{}, false
	case len(suffixes) == 1 && (suffixes[0] == "" || !compressionSuffixes[suffixes[0]]):
		return name{}, false
	}
	unix, err := strconv.ParseInt(timeAndSuffixes[0], 10, 64)
	if err != nil {
		return name{}, false
	}
	return name{etcd: etcd, kind: tokens[0], lastRev: lastRev, createdOn: time.Unix(unix, 0).UTC()}, true
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
