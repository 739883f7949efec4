// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package replication

import (
	"slices"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestDecideKeepDestinationChain: a reverse pass (the copy into the primary) once the primary's
// new writer wrote its own snapshots copies back only what lies before their chain; a late
// delta of the old writer that overlaps it is superseded, never copied, not in the lag.
func TestDecideKeepDestinationChain(t *testing.T) {
	const prefix = "shoot--p--s--1/"
	now := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	at := func(minutesAgo int) time.Time { return now.Add(-time.Duration(minutesAgo) * time.Minute) }
	snap := func(name string) string { return prefix + "etcd-main/v2/" + name }
	var (
		full0      = snap("Full-00000000-00000100-1764392400.gz")
		incr1      = snap("Incr-00000101-00000200-1764392700.gz") // the copy's, not yet back
		incr2      = snap("Incr-00000201-00000300-1764393000.gz") // the old writer's late delta in the copy
		newIncr    = snap("Incr-00000201-00000350-1764393060.gz") // the primary's new writer's
		newFull    = snap("Full-00000000-00000350-1764393060.gz") // the primary's new writer's full
		oldGone    = snap("Full-00000000-00000050-1764380000.gz") // the copy's garbage collection deleted it there
		events     = prefix + "etcd-events/v2/Incr-00000201-00000300-1764393000.gz"
		eventsBase = prefix + "etcd-events/v2/Full-00000000-00000200-1764392400.gz"
		notASnap   = prefix + "etcd-main/v2/Incr-00000201-00000350-1764393060.gz/0000000001"
	)
	obj := func(key string, minutesAgo int) objectstore.ObjectVersion {
		return objectstore.ObjectVersion{Key: key, Size: 5, Modified: at(minutesAgo)}
	}
	cases := []struct {
		name                string
		source, destination []objectstore.ObjectVersion
		copy, superseded    []string
		lag                 time.Duration
	}{
		{name: "no snapshot of the primary's own: every missing one copied",
			source:      []objectstore.ObjectVersion{obj(full0, 30), obj(incr1, 20), obj(incr2, 10)},
			destination: []objectstore.ObjectVersion{obj(full0, 25)},
			copy:        []string{incr1, incr2}, lag: 20 * time.Minute},
		{name: "the new writer's delta: only what lies before it copied, the overlapping one superseded",
			source:      []objectstore.ObjectVersion{obj(full0, 30), obj(incr1, 20), obj(incr2, 10)},
			destination: []objectstore.ObjectVersion{obj(full0, 25), obj(newIncr, 5)},
			copy:        []string{incr1}, superseded: []string{incr2}, lag: 20 * time.Minute},
		{name: "the new writer's delta built on a snapshot both hold",
			source:      []objectstore.ObjectVersion{obj(full0, 30), obj(incr1, 20), obj(incr2, 10)},
			destination: []objectstore.ObjectVersion{obj(full0, 25), obj(incr1, 15), obj(newIncr, 5)},
			superseded:  []string{incr2}},
		{name: "the new writer's full snapshot: what lies after the common base superseded",
			source:      []objectstore.ObjectVersion{obj(full0, 30), obj(incr1, 20), obj(incr2, 10)},
			destination: []objectstore.ObjectVersion{obj(full0, 25), obj(incr1, 15), obj(newFull, 5)},
			superseded:  []string{incr2}},
		{name: "older snapshots only the primary holds (the copy's garbage collection) are not its own",
			source:      []objectstore.ObjectVersion{obj(full0, 30), obj(incr1, 20), obj(incr2, 10)},
			destination: []objectstore.ObjectVersion{obj(oldGone, 90), obj(full0, 25)},
			copy:        []string{incr1, incr2}, lag: 20 * time.Minute},
		{name: "nothing in common: nothing superseded (a new writer cannot be told from history)",
			source:      []objectstore.ObjectVersion{obj(incr1, 20), obj(incr2, 10)},
			destination: []objectstore.ObjectVersion{obj(oldGone, 90), obj(newIncr, 5)},
			copy:        []string{incr1, incr2}, lag: 20 * time.Minute},
		{name: "per etcd: another etcd's chain supersedes nothing of this one",
			source:      []objectstore.ObjectVersion{obj(full0, 30), obj(incr1, 20), obj(eventsBase, 30), obj(events, 10)},
			destination: []objectstore.ObjectVersion{obj(full0, 25), obj(eventsBase, 25), obj(snap("Incr-00000101-00000150-1764393060.gz"), 5)},
			copy:        []string{events}, superseded: []string{incr1}, lag: 10 * time.Minute},
		{name: "keys that are not snapshots are ignored on both sides",
			source:      []objectstore.ObjectVersion{obj(full0, 30), obj(incr1, 20), obj(incr2, 10)},
			destination: []objectstore.ObjectVersion{obj(full0, 25), obj(notASnap, 5), obj(prefix+"etcd-main/v2/Incr-x-y-z", 5)},
			copy:        []string{incr1, incr2}, lag: 20 * time.Minute},
		{name: "the primary's deleted snapshot is not its own",
			source: []objectstore.ObjectVersion{obj(full0, 30), obj(incr1, 20), obj(incr2, 10)},
			destination: []objectstore.ObjectVersion{obj(full0, 25),
				{Key: newIncr, Modified: at(5), DeleteMarker: true}},
			copy: []string{incr1, incr2}, lag: 20 * time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := map[string]objectstore.ObjectVersion{}
			for _, d := range c.destination {
				dst[d.Key] = d
			}
			p := decide(prefix, gcs, c.source, nil, dst, true, now)
			keys := func(vs []objectstore.ObjectVersion) []string {
				var out []string
				for _, v := range vs {
					out = append(out, v.Key)
				}
				return out
			}
			copied, superseded := keys(p.Copy), keys(p.Superseded)
			slices.Sort(copied) // the order of Copy is TestDecide's
			if !slices.Equal(copied, c.copy) || !slices.Equal(superseded, c.superseded) || p.Lag != c.lag {
				t.Errorf("copy %v, superseded %v, lag %s; want %v, %v, %s", copied, superseded, p.Lag, c.copy, c.superseded, c.lag)
			}
			// The forward pass never supersedes anything.
			if p := decide(prefix, gcs, c.source, nil, dst, false, now); len(p.Superseded) != 0 || len(p.Copy) != len(c.copy)+len(c.superseded) {
				t.Errorf("without KeepDestinationChain: copy %v, superseded %v", keys(p.Copy), keys(p.Superseded))
			}
		})
	}
}
