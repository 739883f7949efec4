// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Plan is what one pass copies, decided from the two listings alone.
type Plan struct {
	// Copy are the source's snapshots the destination lacks or holds an older, different object
	// of, oldest first (so that the lag shrinks as the pass goes): each the version a restore
	// from the source reads (its SnapshotRule), with its version ID.
	Copy []objectstore.ObjectVersion
	// InSync counts the source's snapshots the destination holds with the same size (and MD5,
	// where both listings state it).
	InSync int
	// Conflicts are keys where the destination holds a different object that is not older than
	// the source's: never overwritten, and counted in the lag.
	Conflicts []Conflict
	// Excluded counts the source's snapshot keys a restore from the source leaves out by
	// etcd-backup-restore's exclude mark, as the source's SnapshotRule reads it: not copied.
	Excluded int
	// Unreadable are listed versions a restore from the source reads by name although their key
	// has no current version (Azure: a deleted blob's versions): a restore from the source fails
	// on them, and no copy can hold them. Not copied, not in the lag.
	Unreadable []objectstore.ObjectVersion
	// Overwrites are the destination's current versions that Copy replaces (older and
	// different), by key; a key of Copy not in it is missing from the destination (or deleted).
	// A conditional write replaces exactly that version (its ETag) or writes only where the key
	// is still missing.
	Overwrites map[string]objectstore.ObjectVersion
	// Superseded are the source's snapshots the destination lacks but its own writer's chain
	// already covers (Options.KeepDestinationChain, supersededFrom), in key order: never copied
	// (a restore from the destination would apply their revisions twice), not in the lag.
	Superseded []objectstore.ObjectVersion
	// Lag is the age of the oldest source snapshot not yet in the destination (Copy and
	// Conflicts); 0 when the destination is caught up.
	Lag time.Duration
}

// Conflict is a key whose destination object differs from the source's and is not older.
type Conflict struct {
	Source, Destination objectstore.ObjectVersion
}

// Done reports whether the destination holds every snapshot of the source.
func (p Plan) Done() bool { return len(p.Copy) == 0 && len(p.Conflicts) == 0 }

// decide compares what a restore from the source reads under prefix (restored, by the source's
// rule: S3 with versioning each key's oldest version, GCS its live object, ...) with the
// destination's current versions. Only snapshots (etcd-backup-restore's names,
// snapshotname.Parse; no chunks, nothing else) are copied; marked are the exclude marks
// SnapshotRule.MarkOf answered for markQuestions. With keepChain (Options.KeepDestinationChain)
// a missing snapshot the destination's own chain covers is Superseded, not copied. It does no I/O
// and never reads a clock: now is the observation's time.
func decide(prefix string, rule objectstore.SnapshotRule, source []objectstore.ObjectVersion, marked map[versionID]bool, destination map[string]objectstore.ObjectVersion, keepChain bool, now time.Time) Plan {
	var p Plan
	var read []objectstore.ObjectVersion
	read, p.Excluded, p.Unreadable = restored(prefix, rule, source, marked)
	var chains map[string]int64
	if keepChain {
		chains = supersededFrom(prefix, snapshotKeys(prefix, rule, source), destination)
	}
	var behind []time.Time
	for _, s := range read {
		d, ok := destination[s.Key]
		switch {
		case (!ok || d.Noncurrent || d.DeleteMarker) && isSuperseded(prefix, s, chains):
			p.Superseded = append(p.Superseded, s)
			continue
		case !ok || d.Noncurrent || d.DeleteMarker:
			p.Copy = append(p.Copy, s)
		case same(s, d):
			p.InSync++
			continue
		case d.Modified.Before(s.Modified):
			p.Copy = append(p.Copy, s)
			if p.Overwrites == nil {
				p.Overwrites = map[string]objectstore.ObjectVersion{}
			}
			p.Overwrites[s.Key] = d
		default:
			p.Conflicts = append(p.Conflicts, Conflict{Source: s, Destination: d})
		}
		behind = append(behind, s.Modified)
	}
	slices.SortStableFunc(p.Copy, func(a, b objectstore.ObjectVersion) int {
		return cmp.Or(a.Modified.Compare(b.Modified), strings.Compare(a.Key, b.Key))
	})
	p.Lag = lag(behind, now)
	return p
}

// same reports whether d holds s's content as far as the listings tell: the same size, and the
// same MD5 where both state one. ETags are never compared: across store types they differ in
// form and meaning (S3's MD5 or a multipart checksum, Azure's opaque version tag, Swift's hash).
func same(s, d objectstore.ObjectVersion) bool {
	if s.Size != d.Size {
		return false
	}
	return s.ContentMD5 == "" || d.ContentMD5 == "" || s.ContentMD5 == d.ContentMD5
}

// lag is the age at now of the oldest of written (0 for none; never negative, whatever the
// clocks' difference).
func lag(written []time.Time, now time.Time) time.Duration {
	if len(written) == 0 {
		return 0
	}
	oldest := slices.MinFunc(written, time.Time.Compare)
	return max(now.Sub(oldest), 0)
}
