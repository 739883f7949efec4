// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Take lists prefix (an entry's `<entry>/`) once and returns what it found. Memory does not grow
// with the listing: each page is counted and dropped; only the newest snapshots per etcd are
// kept. A failed listing returns its error (wrapped, so that errors.Is sees the store's
// sentinels) and no inventory: a partial count must not pass for the entry's content.
func Take(ctx context.Context, store objectstore.DataPlane, bucket, prefix string, now time.Time) (Inventory, error) {
	inv := Inventory{CountedAt: metav1.NewTime(now)}
	etcds := map[string]*newest{}
	err := store.ListObjects(ctx, bucket, prefix, func(page []objectstore.ObjectVersion) error {
		inv.Pages++
		for _, o := range page {
			inv.Versions++
			inv.Bytes += o.Size
			if o.RetainUntil.After(now) {
				inv.UnderRetention++
			}
			if o.Noncurrent {
				// A noncurrent version, delete marker or snapshot is not what the sidecar
				// restores from: it does not make the backups fresh.
				continue
			}
			inv.Objects++
			// A store's listing only returns keys under prefix; the check keeps a misbehaving
			// one from yielding nonsense names.
			rel, ok := strings.CutPrefix(o.Key, prefix)
			if !ok {
				continue
			}
			n, ok := parseName(rel)
			if !ok {
				continue
			}
			e := etcds[n.etcd]
			if e == nil {
				e = &newest{}
				etcds[n.etcd] = e
			}
			e.offer(o.Key, n)
		}
		return nil
	})
	if err != nil {
		return Inventory{}, fmt.Errorf("listing %q in bucket %q: %w", prefix, bucket, err)
	}
	for etcdName, e := range etcds {
		inv.Etcds = append(inv.Etcds, Etcd{Name: etcdName, LatestFull: e.full.snapshot(), LatestDelta: e.delta.snapshot()})
	}
	slices.SortFunc(inv.Etcds, func(a, b Etcd) int { return strings.Compare(a.Name, b.Name) })
	return inv, nil
}

// newest holds one etcd's newest full and delta snapshot seen so far.
type newest struct{ full, delta candidate }

type candidate struct {
	key string
	n   name
	set bool
}

func (e *newest) offer(key string, n name) {
	c := &e.delta
	if n.kind == kindFull {
		c = &e.full
	}
	// Equal time and revision (the same snapshot under two layouts, or with and without
	// compression): the greater key, so that the result does not depend on listing order.
	if !c.set || newer(n, c.n) || (!newer(c.n, n) && key > c.key) {
		*c = candidate{key: key, n: n, set: true}
	}
}

// newer orders snapshots by the time in their names, then by last revision: two snapshots in
// the same second are told apart by the revision they reach.
func newer(a, b name) bool {
	if !a.createdOn.Equal(b.createdOn) {
		return a.createdOn.After(b.createdOn)
	}
	return a.lastRev > b.lastRev
}

func (c candidate) snapshot() *Snapshot {
	if !c.set {
		return nil
	}
	return &Snapshot{Key: c.key, Time: metav1.NewTime(c.n.createdOn)}
}
