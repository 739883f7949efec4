// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore

import "context"

// ExcludeMarkKey is etcd-backup-restore's mark of a snapshot its restore must skip, with the value
// "true" (ExcludeSnapshotMetadataKey, etcd-backup-restore v0.44.1 pkg/types/snapstore.go:59-61):
// an object tag on S3, an object metadata entry on GCS, a blob index tag on Azure.
const ExcludeMarkKey = "x-etcd-snapshot-exclude"

// SnapshotRule is how etcd-backup-restore's snapstore of a store lists the snapshots of a prefix
// (its List) and which version of each its Fetch reads. It is the store's, not the drill's: a
// restore drill and the inventory's chain check select the chain by it, so that they judge
// exactly the chain a restore would use. Each DataPlane states its rule in one place
// (SnapshotRule), citing etcd-backup-restore's file:line; docs/restore-drills.md collects them.
type SnapshotRule struct {
	// Versions says which versions of a key the snapstore lists.
	Versions VersionChoice
	// Exclusion says when a listed version carrying the exclude mark is left out.
	Exclusion Exclusion
	// ReadsListedVersion: Fetch reads the listed version by its ID (ObjectVersion.Version);
	// false: it reads the key's current version, which a key without one (deleted) lacks.
	ReadsListedVersion bool
	// MarkOf reads whether one listed version carries the exclude mark, for a store whose
	// listing does not tell (S3 object tags: one request per version asked). Set only where
	// Exclusion needs it; nil otherwise (then ObjectVersion.ExcludeMark is the listing's word).
	MarkOf func(ctx context.Context, o ObjectVersion) (bool, error)
	// Source cites the snapstore code the rule is read from, for messages.
	Source string
}

// VersionChoice is which versions of a key a snapstore lists.
type VersionChoice int

const (
	// CurrentVersions means the versions a plain read returns (Noncurrent false); a key whose newest
	// version is a delete marker or a noncurrent generation is not listed.
	CurrentVersions VersionChoice = iota
	// OldestVersion means every key with at least one version (not a delete marker), once, as its
	// oldest version (by Modified; at a tie the one listed first).
	OldestVersion
	// EveryVersion means every version of every key, each as a snapshot of its own (a key with two
	// versions is listed twice), delete markers and blob snapshots not included.
	EveryVersion
)

// Exclusion is when a snapstore leaves out a version carrying the exclude mark.
type Exclusion int

const (
	// NoExclusion means the mark is not looked at.
	NoExclusion Exclusion = iota
	// ExcludeMarked means a listed version whose ObjectVersion.ExcludeMark is set is left out.
	ExcludeMarked
	// ExcludeMarkedIfDeleted means a key that has a delete marker (any, not only the newest) is left
	// out when its listed version carries the mark (asked with MarkOf); a key without a delete
	// marker is listed, marked or not.
	ExcludeMarkedIfDeleted
)
