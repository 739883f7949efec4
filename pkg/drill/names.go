package drill

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

// Compression suffixes etcd-backup-restore v0.43.0 writes and decompresses
// (pkg/compressor/types.go:22-28, IsSnapshotCompressed in pkg/compressor/compressor.go:124).
const (
	suffixNone = ""
	suffixGzip = ".gz"
	suffixLZW  = ".Z"
	suffixZlib = ".zlib"
)

// Snapshot is one snapshot object as its key names it.
type Snapshot struct {
	// Key is the object's whole key.
	Key string
	// Etcd is the directory below the drilled prefix, e.g. "etcd-main".
	Etcd string
	// Kind is KindFull or KindDelta.
	Kind string
	// StartRevision and LastRevision as named. A full snapshot is named from 0; its last revision
	// is the one etcd reported just before the snapshot, which the snapshot may exceed
	// (etcd-backup-restore's snapshotter.go:337-348).
	StartRevision, LastRevision int64
	// CreatedOn is the Unix time in the name.
	CreatedOn time.Time
	// Compression is the suffix, with its dot ("" uncompressed). Any suffix is kept, as
	// etcd-backup-restore's ParseSnapshot keeps it (pkg/snapstore/snapshot.go:116-125): one it
	// cannot decompress is in its chain and fails its restore, so the drill reports it.
	Compression string
	// Final marks a full snapshot taken before etcd was stopped.
	Final bool
	// Size is the object's size from the listing.
	Size int64
}

// ParseKey parses key (with prefix, the entry's "<entry>/", cut off first) the way
// etcd-backup-restore's ParseSnapshot (pkg/snapstore/snapshot.go:34) reads it, with the layout
// directory a whole path component (as pkg/inventory's parseName) and chunks (one path component
// more: segments of Swift's and GCS's composite uploads) not being snapshots (IsChunk).
//
//	v2: <etcd>/v2/<snapshot>
//	v1: <etcd>/v1/<Backup-<unix>>/<snapshot>
//	<snapshot>: <Full|Incr>-<startRev>-<lastRev>-<unix>[.<compression>][.final]
func ParseKey(prefix, key string) (Snapshot, bool) {
	if !strings.HasPrefix(key, prefix) {
		return Snapshot{}, false
	}
	rel := key[len(prefix):]
	etcd, layout, rest, ok := cutLayout(rel, "v1")
	if !ok {
		if etcd, layout, rest, ok = cutLayout(rel, "v2"); !ok {
			return Snapshot{}, false
		}
	}
	parts := strings.Split(rest, "/")
	var snap string
	switch {
	case layout == "v2" && len(parts) == 1:
		snap = parts[0]
	case layout == "v1" && len(parts) == 2 && parts[0] != "":
		snap = parts[1]
	default:
		return Snapshot{}, false
	}
	tokens := strings.Split(snap, "-")
	if len(tokens) != 4 || (tokens[0] != KindFull && tokens[0] != KindDelta) {
		return Snapshot{}, false
	}
	start, err := strconv.ParseInt(tokens[1], 10, 64)
	if err != nil {
		return Snapshot{}, false
	}
	last, err := strconv.ParseInt(tokens[2], 10, 64)
	if err != nil || start > last {
		return Snapshot{}, false
	}
	s := Snapshot{Key: key, Etcd: etcd, Kind: tokens[0], StartRevision: start, LastRevision: last}
	fields := strings.Split(tokens[3], ".")
	if n := len(fields); n > 1 && fields[n-1] == "final" {
		s.Final = true
		fields = fields[:n-1]
	}
	switch len(fields) {
	case 1:
	case 2:
		s.Compression = "." + fields[1]
	default:
		return Snapshot{}, false
	}
	unix, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return Snapshot{}, false
	}
	s.CreatedOn = time.Unix(unix, 0).UTC()
	return s, true
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

// knownCompression reports whether etcd-backup-restore v0.43.0 can decompress suffix.
func knownCompression(suffix string) bool {
	switch suffix {
	case suffixNone, suffixGzip, suffixLZW, suffixZlib:
		return true
	}
	return false
}
