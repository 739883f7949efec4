package drill

import (
	"strings"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/snapshotname"
)

// Snapshot kinds as etcd-backup-restore names them (pkg/types/snapstore.go: SnapshotKindFull,
// SnapshotKindDelta).
const (
	KindFull  = snapshotname.KindFull
	KindDelta = snapshotname.KindDelta
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

// ParseKey parses key (with prefix, the entry's "<entry>/", cut off first) with
// snapshotname.Parse, the parser the inventory uses too. Any compression suffix is kept: one
// etcd-backup-restore cannot decompress is in its chain and fails its restore, so the drill
// reports it (knownCompression).
func ParseKey(prefix, key string) (Snapshot, bool) {
	if !strings.HasPrefix(key, prefix) {
		return Snapshot{}, false
	}
	n, ok := snapshotname.Parse(key[len(prefix):])
	if !ok {
		return Snapshot{}, false
	}
	return Snapshot{Key: key, Etcd: n.Etcd, Kind: n.Kind, StartRevision: n.StartRevision, LastRevision: n.LastRevision,
		CreatedOn: n.CreatedOn, Compression: n.Compression, Final: n.Final}, true
}

// knownCompression reports whether etcd-backup-restore v0.43.0 can decompress suffix.
func knownCompression(suffix string) bool {
	return snapshotname.Name{Compression: suffix}.Restorable()
}
