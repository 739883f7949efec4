// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Collector gathers the snapshots of a listing page by page (as objectstore's ListObjects hands
// them over) and selects each etcd's chain from them as etcd-backup-restore's snapstore of that
// store lists them (objectstore.SnapshotRule: which versions, which are excluded, which version
// is read), then checks it by names, without reading an object. It keeps one small record per
// snapshot key (and per listed version where the rule lists every version), never object
// content. Not safe for concurrent use.
type Collector struct {
	prefix string
	rule   objectstore.SnapshotRule
	keys   map[string]*keyVersions
}

// keyVersions is what the rule needs of one snapshot key's versions.
type keyVersions struct {
	name Snapshot
	// listed are the versions the rule keeps so far: the current one (CurrentVersions), the
	// oldest seen (OldestVersion), or every one (EveryVersion).
	listed       []objectstore.ObjectVersion
	hasCurrent   bool
	deleteMarker bool
}

// NewCollector collects snapshots under prefix (the entry's "<entry>/") by rule, the store's
// (DataPlane.SnapshotRule of the bucket listed).
func NewCollector(prefix string, rule objectstore.SnapshotRule) *Collector {
	return &Collector{prefix: prefix, rule: rule, keys: map[string]*keyVersions{}}
}

// Add takes one page of a listing. Keys that are not snapshots and blob snapshots are skipped;
// of the others it keeps what the rule needs.
func (c *Collector) Add(page []objectstore.ObjectVersion) {
	for _, o := range page {
		if o.BlobSnapshot {
			continue
		}
		k := c.keys[o.Key]
		if k == nil {
			s, ok := ParseKey(c.prefix, o.Key)
			if !ok {
				continue
			}
			k = &keyVersions{name: s}
			c.keys[o.Key] = k
		}
		if o.DeleteMarker {
			k.deleteMarker = true
			continue
		}
		if !o.Noncurrent {
			k.hasCurrent = true
		}
		switch c.rule.Versions {
		case objectstore.CurrentVersions:
			if !o.Noncurrent {
				k.listed = []objectstore.ObjectVersion{o}
			}
		case objectstore.OldestVersion:
			// At a tie of times the one listed first stays, as in s3_snapstore.go:662.
			if len(k.listed) == 0 || o.Modified.Before(k.listed[0].Modified) {
				k.listed = []objectstore.ObjectVersion{o}
			}
		case objectstore.EveryVersion:
			k.listed = append(k.listed, o)
		}
	}
}

// Chains returns every etcd's chain, ordered by etcd name, each checked by names. Where the rule
// reads the exclude mark with a request (S3: a key with a delete marker), it asks it here, once
// per such key; its error is the store's (the chains are then unknown).
func (c *Collector) Chains(ctx context.Context) ([]Chain, error) {
	byEtcd := map[string][]Snapshot{}
	for _, key := range slices.Sorted(maps.Keys(c.keys)) {
		k := c.keys[key]
		for _, o := range k.listed {
			excluded, err := c.excluded(ctx, k, o)
			if err != nil {
				return nil, err
			}
			if excluded {
				continue
			}
			s := k.name
			s.Size = o.Size
			if c.rule.ReadsListedVersion {
				s.Version = o.Version
			} else {
				s.NoCurrentVersion = !k.hasCurrent
			}
			byEtcd[s.Etcd] = append(byEtcd[s.Etcd], s)
		}
	}
	chains := make([]Chain, 0, len(byEtcd))
	for _, e := range slices.Sorted(maps.Keys(byEtcd)) {
		chains = append(chains, buildChain(e, byEtcd[e]))
	}
	return chains, nil
}

// excluded applies the rule's exclusion to one listed version of k.
func (c *Collector) excluded(ctx context.Context, k *keyVersions, o objectstore.ObjectVersion) (bool, error) {
	switch c.rule.Exclusion {
	case objectstore.ExcludeMarked:
		return o.ExcludeMark, nil
	case objectstore.ExcludeMarkedIfDeleted:
		if !k.deleteMarker {
			return false, nil
		}
		if c.rule.MarkOf == nil {
			return false, fmt.Errorf("the snapshot rule %q reads exclude marks but has no MarkOf", c.rule.Source)
		}
		marked, err := c.rule.MarkOf(ctx, o)
		if err != nil {
			return false, fmt.Errorf("reading the exclude mark of %s: %w", o.Key, err)
		}
		return marked, nil
	}
	return false, nil
}

// CheckChains is the cheap check: every etcd's chain under prefix, selected by rule from objects
// and checked by names (gaps, overlaps, a delta before its full, no full snapshot, a compression
// etcd-backup-restore cannot read, a snapshot it cannot read). Nothing is downloaded.
func CheckChains(ctx context.Context, prefix string, rule objectstore.SnapshotRule, objects []objectstore.ObjectVersion) ([]Chain, error) {
	c := NewCollector(prefix, rule)
	c.Add(objects)
	return c.Chains(ctx)
}

// Collect lists prefix once through src and returns every etcd's chain as etcd-backup-restore
// would select it from that store (src.SnapshotRule). Its error is the store's.
func Collect(ctx context.Context, src Source, bucket, prefix string) ([]Chain, error) {
	return collect(ctx, src, bucket, prefix, 0)
}

// collect is Collect with a cap on the object versions listed (0: none): past it the listing
// stops, and the error is ReasonCutOff's.
func collect(ctx context.Context, src Source, bucket, prefix string, maxKeys int) ([]Chain, error) {
	rule, err := src.SnapshotRule(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("reading how etcd-backup-restore lists bucket %s: %w", bucket, err)
	}
	col := NewCollector(prefix, rule)
	listed := 0
	var capped error
	err = src.ListObjects(ctx, bucket, prefix, func(page []objectstore.ObjectVersion) error {
		if listed += len(page); maxKeys > 0 && listed > maxKeys {
			// Held here too: a store's ListObjects need not hand fn's error back unwrapped.
			capped = newError(ReasonCutOff, "", nil, "the listing of %s holds more than %d object versions, the cap", prefix, maxKeys)
			return capped
		}
		col.Add(page)
		return nil
	})
	switch {
	case capped != nil:
		return nil, capped
	case err != nil:
		return nil, fmt.Errorf("listing %s: %w", prefix, err)
	}
	return col.Chains(ctx)
}
