// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"strings"

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

// Snapshot is one snapshot object: its name taken apart (snapshotname.Name; a full snapshot is
// named from revision 0, and its last revision is the one etcd reported just before the
// snapshot, which the snapshot may exceed: etcd-backup-restore's snapshotter.go:337-348), its
// whole key and its listed size.
type Snapshot struct {
	snapshotname.Name

	// Key is the object's whole key.
	Key string
	// Size is the object's size from the listing.
	Size int64
	// Version is the version a read must ask for ("": the current one): the listed version where
	// the store's SnapshotRule says etcd-backup-restore fetches it by its ID.
	Version string
	// NoCurrentVersion: etcd-backup-restore lists this version but reads the key by name, and
	// the key has no current version (a deleted blob's previous version on Azure).
	NoCurrentVersion bool
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
	return Snapshot{Name: n, Key: key}, true
}

// knownCompression reports whether etcd-backup-restore v0.43.0 can decompress suffix.
func knownCompression(suffix string) bool {
	return snapshotname.Name{Compression: suffix}.Restorable()
}
