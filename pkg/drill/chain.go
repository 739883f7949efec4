// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"cmp"
	"slices"
)

// Chain is what etcd-backup-restore v0.43.0 restores for one etcd: its newest full snapshot and
// every delta after it, in order (GetLatestFullSnapshotAndDeltaSnapList,
// pkg/miscellaneous/miscellaneous.go:130, over a list sorted as SnapList.Less sorts it,
// pkg/types/snapstore.go:160: by last revision, then creation time).
type Chain struct {
	Etcd string
	// Full is the newest full snapshot; nil when there is none.
	Full *Snapshot
	// Deltas are the deltas after Full, oldest first.
	Deltas []Snapshot
	// Err is the names' verdict: nil when they form one unbroken chain, else an *Error with
	// ReasonNoFullSnapshot, ReasonChainBroken or ReasonUndecodable (a compression suffix
	// etcd-backup-restore cannot decompress).
	Err error
}

// LastRevision is the revision a restore of the chain must end at: the newest delta's last
// revision, or the full snapshot's when there are no deltas (0 without a full snapshot).
func (c Chain) LastRevision() int64 {
	if n := len(c.Deltas); n > 0 {
		return c.Deltas[n-1].LastRevision
	}
	if c.Full != nil {
		return c.Full.LastRevision
	}
	return 0
}

// Size is the sum of the listed sizes of the chain's objects: what a drill reads.
func (c Chain) Size() int64 {
	var n int64
	if c.Full != nil {
		n = c.Full.Size
	}
	for _, d := range c.Deltas {
		n += d.Size
	}
	return n
}

// buildChain selects and checks one etcd's chain from its snapshots (any order).
func buildChain(etcd string, snaps []Snapshot) Chain {
	snaps = slices.Clone(snaps)
	// SnapList.Less: last revision, then creation time; at a tie of both a full snapshot comes
	// last (it holds everything a delta of the same revision holds), where etcd-backup-restore's
	// unstable sort leaves the order open.
	slices.SortStableFunc(snaps, func(a, b Snapshot) int {
		if c := cmp.Compare(a.LastRevision, b.LastRevision); c != 0 {
			return c
		}
		if c := a.CreatedOn.Compare(b.CreatedOn); c != 0 {
			return c
		}
		return cmp.Compare(kindOrder(a.Kind), kindOrder(b.Kind))
	})
	ch := Chain{Etcd: etcd}
	fullAt := -1
	for i := len(snaps) - 1; i >= 0; i-- {
		if snaps[i].Kind == KindFull {
			fullAt = i
			break
		}
	}
	if fullAt < 0 {
		ch.Deltas = snaps
		ch.Err = newError(ReasonNoFullSnapshot, "", nil, "%d delta snapshots of %s and no full snapshot to apply them to", len(snaps), etcd)
		return ch
	}
	full := snaps[fullAt]
	ch.Full = &full
	ch.Deltas = snaps[fullAt+1:]
	ch.Err = checkChain(ch, snaps[:fullAt])
	return ch
}

func kindOrder(kind string) int {
	if kind == KindFull {
		return 1
	}
	return 0
}

// checkChain checks a selected chain by names; older are the snapshots sorted before its full.
func checkChain(ch Chain, older []Snapshot) error {
	full := *ch.Full
	for _, s := range append([]Snapshot{full}, ch.Deltas...) {
		if s.NoCurrentVersion {
			return newError(ReasonChainBroken, s.Key, nil, "etcd-backup-restore lists this snapshot (a previous version of a deleted blob) and reads it by name, which finds no current version: its restore fails here")
		}
		if !knownCompression(s.Compression) {
			return newError(ReasonUndecodable, s.Key, nil, "compression suffix %q is none etcd-backup-restore can decompress (.gz, .Z, .zlib or none)", s.Compression)
		}
	}
	prev := full
	for _, d := range ch.Deltas {
		want := prev.LastRevision + 1
		switch {
		case d.Key == prev.Key:
			return newError(ReasonChainBroken, d.Key, nil, "listed twice: etcd-backup-restore lists every version of a blob as a snapshot and would apply this delta twice")
		case d.StartRevision > want:
			return newError(ReasonChainBroken, d.Key, nil, "gap: revisions %d to %d are in no snapshot after %s", want, d.StartRevision-1, prev.Key)
		case d.StartRevision < want && prev.Kind == KindFull:
			return newError(ReasonChainBroken, d.Key, nil, "delta starts at revision %d, inside its full snapshot %s (up to %d): a delta older than its full or a second writer", d.StartRevision, prev.Key, prev.LastRevision)
		case d.StartRevision < want:
			return newError(ReasonChainBroken, d.Key, nil, "overlap: starts at revision %d, inside %s (up to %d): a second writer on the prefix", d.StartRevision, prev.Key, prev.LastRevision)
		}
		prev = d
	}
	// A delta written after the full snapshot (by its name's time) that ends before it: the
	// writer of that delta did not follow the full snapshot, so two writers share the prefix or
	// the chain's history was rewritten. etcd-backup-restore would skip it silently.
	for _, o := range older {
		if o.Kind == KindDelta && o.CreatedOn.After(full.CreatedOn) {
			return newError(ReasonChainBroken, o.Key, nil, "delta written after the full snapshot %s ends at revision %d, before it (%d): a delta older than its full, from a second writer", full.Key, o.LastRevision, full.LastRevision)
		}
	}
	return nil
}
