// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import (
	"strings"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/snapshotname"
)

// supersededFrom is where the destination's own writer's chain starts, per etcd (the store
// prefix below the entry, snapshotname.Name.Etcd): a source snapshot of that etcd the
// destination lacks and whose last revision is at or beyond it is superseded (Options.
// KeepDestinationChain). An etcd not in the map has no chain of its own in the destination.
//
// The destination's own snapshots are those it holds (current, not deleted) whose key the source
// does not list at all and whose last revision is beyond base, the greatest last revision of the
// etcd's snapshots both hold by key: the snapshot a new writer of the destination built its
// chain on (etcd-backup-restore's snapshotter starts from the store's newest snapshot) is one
// the reverse passes brought there, so both hold it. Older destination-only snapshots (the
// source's garbage collection deleted them there) are not the destination's own. With no
// snapshot in common nothing is superseded: a new writer cannot be told from history.
//
// The chain starts at the smallest start revision of its deltas; a full snapshot (named from
// revision 0) starts it at base+1: the source's snapshots up to base are the history the
// destination's writer built on, and a restore reads its full snapshot and what follows.
// listed are the source's snapshot keys under prefix (snapshotKeys: any version, deleted or
// excluded ones too).
func supersededFrom(prefix string, listed map[string]*snapshotKey, destination map[string]objectstore.ObjectVersion) map[string]int64 {
	type etcd struct {
		hasBase bool
		base    int64
	}
	etcds := map[string]*etcd{}
	var onlyHere []snapshotname.Name
	for key, d := range destination {
		if d.DeleteMarker || d.Noncurrent || d.BlobSnapshot {
			continue
		}
		n, ok := parse(prefix, key)
		if !ok {
			continue
		}
		e := etcds[n.Etcd]
		if e == nil {
			e = &etcd{}
			etcds[n.Etcd] = e
		}
		if _, both := listed[key]; !both {
			onlyHere = append(onlyHere, n)
			continue
		}
		if !e.hasBase || n.LastRevision > e.base {
			e.hasBase, e.base = true, n.LastRevision
		}
	}
	from := map[string]int64{}
	for _, n := range onlyHere {
		e := etcds[n.Etcd]
		if !e.hasBase || n.LastRevision <= e.base {
			continue
		}
		start := n.StartRevision
		if n.Kind == snapshotname.KindFull {
			start = e.base + 1
		}
		if r0, ok := from[n.Etcd]; !ok || start < r0 {
			from[n.Etcd] = start
		}
	}
	return from
}

// isSuperseded reports whether the source's snapshot s reaches into the destination's own chain
// (supersededFrom's from).
func isSuperseded(prefix string, s objectstore.ObjectVersion, from map[string]int64) bool {
	n, ok := parse(prefix, s.Key)
	if !ok {
		return false
	}
	r0, ok := from[n.Etcd]
	return ok && n.LastRevision >= r0
}

// parse reads key's snapshot name below prefix.
func parse(prefix, key string) (snapshotname.Name, bool) {
	rel, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return snapshotname.Name{}, false
	}
	return snapshotname.Parse(rel)
}
