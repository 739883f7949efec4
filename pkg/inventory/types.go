// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package inventory counts what is stored under a BackupEntry's prefix and finds the newest full
// and delta snapshots etcd-backup-restore wrote there, in one streamed listing; and it judges
// from that whether the entry's backups are fresh.
package inventory

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Inventory is what one listing of an entry's prefix (Prefix) found. It is published in the BackupEntry's
// status.providerStatus under "inventory".
type Inventory struct {
	// Bucket and Region are where the listing was taken (the entry's spec.bucketName and
	// spec.region then): an entry whose spec names another place is counted there anew, and
	// nothing of this inventory is judged for it. Empty in inventories of earlier versions.
	Bucket string `json:"bucket,omitempty"`
	Region string `json:"region,omitempty"`
	// Prefix is the key prefix listed: `<entry>/` for a shoot's entry, the garden's
	// `[<path>/]virtual-garden-etcd-main/` for a garden's (backupentry.Locate). Empty in
	// inventories of earlier versions.
	Prefix string `json:"prefix,omitempty"`
	// Since is set when the entry moved to Bucket after its creation: when it was first counted
	// there. The grace for a first full snapshot counts from it instead of the entry's creation.
	Since *metav1.Time `json:"since,omitempty"`
	// CountedAt is when the listing started.
	CountedAt metav1.Time `json:"countedAt"`
	// Objects is the number of current objects (what a plain read returns).
	Objects int64 `json:"objects"`
	// Versions is the number of every listed version: current and noncurrent versions, delete
	// markers and snapshots.
	Versions int64 `json:"versions"`
	// Bytes is the size of every listed version.
	Bytes int64 `json:"bytes"`
	// UnderRetention is the number of versions whose retention lock (as the listing tells) had
	// not expired at CountedAt.
	UnderRetention int64 `json:"underRetention"`
	// Etcds has one element per snapshot directory found (for example "etcd-main",
	// "etcd-events": the part of the key between `<entry>/` and the snapshot layout), sorted by
	// name. Bounded: keys that are not snapshots do not add elements.
	Etcds []Etcd `json:"etcds,omitempty"`
	// Pages is the number of listing pages read (the cost of this inventory).
	Pages int64 `json:"pages"`
}

// Etcd is the newest snapshots of one etcd.
type Etcd struct {
	// Name is the snapshot directory (etcd-backup-restore's store prefix without `<entry>/`).
	Name string `json:"name"`
	// LatestFull is the newest current full snapshot, or nil when there is none.
	LatestFull *Snapshot `json:"latestFull,omitempty"`
	// LatestDelta is the newest current delta (incremental) snapshot, or nil when there is none.
	LatestDelta *Snapshot `json:"latestDelta,omitempty"`
}

// Snapshot is one snapshot as etcd-backup-restore named it.
type Snapshot struct {
	// Key is the object's full name.
	Key string `json:"key"`
	// Time is the snapshot's creation time from its name (Unix seconds there).
	Time metav1.Time `json:"time"`
}

// Thresholds are the ages past which backups are stale.
type Thresholds struct {
	// FullSnapshotMaxAge is the oldest the newest full snapshot may be (default 25h).
	FullSnapshotMaxAge time.Duration
	// DeltaSnapshotMaxAge is the oldest the newest snapshot of either kind may be (default 1h):
	// a full snapshot newer than every delta counts as the newest delta too.
	DeltaSnapshotMaxAge time.Duration
}

// DefaultThresholds are the thresholds when neither flags nor providerConfig say otherwise.
var DefaultThresholds = Thresholds{FullSnapshotMaxAge: 25 * time.Hour, DeltaSnapshotMaxAge: time.Hour}
