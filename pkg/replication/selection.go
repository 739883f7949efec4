// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import (
	"maps"
	"slices"
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/snapshotname"
)

// snapshotKey is what the source's rule needs of one snapshot key's versions.
type snapshotKey struct {
	// listed are the versions the rule lists, in listing order: the current one
	// (CurrentVersions), the oldest (OldestVersion; at a tie of times the one listed first, as
	// s3_snapstore.go:662), or every one (EveryVersion).
	listed       []objectstore.ObjectVersion
	current      *objectstore.ObjectVersion
	deleteMarker bool
}

// snapshotKeys groups the source's versions under prefix by snapshot key, as rule lists them.
// Keys that are not etcd-backup-restore snapshot names (snapshotname.Parse) and blob snapshots
// are left out. The same selection as the restore drill's (drill.Collector); this one keeps the
// whole ObjectVersion (its Modified, its ID) because the copy reads and compares it.
func snapshotKeys(prefix string, rule objectstore.SnapshotRule, versions []objectstore.ObjectVersion) map[string]*snapshotKey {
	keys := map[string]*snapshotKey{}
	for _, o := range versions {
		if o.BlobSnapshot {
			continue
		}
		k := keys[o.Key]
		if k == nil {
			rel, ok := strings.CutPrefix(o.Key, prefix)
			if !ok {
				continue
			}
			if _, ok := snapshotname.Parse(rel); !ok {
				continue
			}
			k = &snapshotKey{}
			keys[o.Key] = k
		}
		if o.DeleteMarker {
			k.deleteMarker = true
			continue
		}
		if !o.Noncurrent {
			k.current = &o
		}
		switch rule.Versions {
		case objectstore.CurrentVersions:
			if !o.Noncurrent {
				k.listed = []objectstore.ObjectVersion{o}
			}
		case objectstore.OldestVersion:
			if len(k.listed) == 0 || o.Modified.Before(k.listed[0].Modified) {
				k.listed = []objectstore.ObjectVersion{o}
			}
		case objectstore.EveryVersion:
			k.listed = append(k.listed, o)
		}
	}
	return keys
}

// markQuestions are the listed versions whose exclude mark the rule reads with a request
// (SnapshotRule.MarkOf: S3's oldest version of a key that has a delete marker), in key order.
// observe asks them before decide, which does no I/O.
func markQuestions(prefix string, rule objectstore.SnapshotRule, versions []objectstore.ObjectVersion) []objectstore.ObjectVersion {
	if rule.Exclusion != objectstore.ExcludeMarkedIfDeleted {
		return nil
	}
	keys := snapshotKeys(prefix, rule, versions)
	var out []objectstore.ObjectVersion
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		if k := keys[key]; k.deleteMarker {
			out = append(out, k.listed...)
		}
	}
	return out
}

// versionID names one listed version in the marks MarkOf answered.
type versionID struct{ key, version string }

// restored is what a restore from the source reads of each snapshot key under prefix, by the
// source's rule: the version to copy (the listed one where the rule reads it by its ID, else the
// key's current version), in key order; how many keys the rule leaves out as excluded; and the
// listed versions a restore would read by name but whose key has no current version (Azure: a
// deleted blob's versions; the restore from the source fails on them, and no copy can hold them).
// marked are the answers to markQuestions.
func restored(prefix string, rule objectstore.SnapshotRule, versions []objectstore.ObjectVersion, marked map[versionID]bool) (read []objectstore.ObjectVersion, excluded int, unreadable []objectstore.ObjectVersion) {
	keys := snapshotKeys(prefix, rule, versions)
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		k := keys[key]
		var kept []objectstore.ObjectVersion
		for _, o := range k.listed {
			if !isExcluded(rule, k, o, marked) {
				kept = append(kept, o)
			}
		}
		if len(kept) == 0 {
			if len(k.listed) > 0 {
				excluded++
			}
			continue
		}
		switch {
		case rule.ReadsListedVersion:
			// Every version kept is a snapshot read by its ID; one key of the copy holds one of
			// them: the first listed (no store's rule lists several and reads each by ID).
			read = append(read, kept[0])
			unreadable = append(unreadable, kept[1:]...)
		case k.current != nil:
			// Read by name, however many versions are listed: the current one is what is read.
			read = append(read, *k.current)
		default:
			unreadable = append(unreadable, kept...)
		}
	}
	return read, excluded, unreadable
}

// isExcluded applies the rule's exclusion to one listed version o of k.
func isExcluded(rule objectstore.SnapshotRule, k *snapshotKey, o objectstore.ObjectVersion, marked map[versionID]bool) bool {
	switch rule.Exclusion {
	case objectstore.ExcludeMarked:
		return o.ExcludeMark
	case objectstore.ExcludeMarkedIfDeleted:
		return k.deleteMarker && marked[versionID{o.Key, o.Version}]
	}
	return false
}
