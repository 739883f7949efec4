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

func TestDecide(t *testing.T) {
	const prefix = "shoot--p--s--1/"
	now := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	at := func(minutesAgo int) time.Time { return now.Add(-time.Duration(minutesAgo) * time.Minute) }
	full := prefix + "etcd-main/v2/Full-00000000-00000100-1764392400.gz"
	delta := prefix + "etcd-main/v2/Incr-00000101-00000200-1764392700.gz"
	obj := func(key string, size int64, minutesAgo int) objectstore.ObjectVersion {
		return objectstore.ObjectVersion{Key: key, Size: size, Modified: at(minutesAgo)}
	}
	withMD5 := func(o objectstore.ObjectVersion, sum string) objectstore.ObjectVersion { o.ContentMD5 = sum; return o }
	cases := []struct {
		name        string
		source      []objectstore.ObjectVersion
		destination []objectstore.ObjectVersion
		copy        []string
		inSync      int
		conflicts   []string
		excluded    int
		lag         time.Duration
	}{
		{name: "empty source: caught up"},
		{name: "empty destination: everything, oldest first", source: []objectstore.ObjectVersion{obj(delta, 5, 10), obj(full, 50, 30)},
			copy: []string{full, delta}, lag: 30 * time.Minute},
		{name: "same size: in sync", source: []objectstore.ObjectVersion{obj(full, 50, 30), obj(delta, 5, 10)},
			destination: []objectstore.ObjectVersion{obj(full, 50, 20), obj(delta, 5, 1)}, inSync: 2},
		{name: "only the missing one, lag is its age", source: []objectstore.ObjectVersion{obj(full, 50, 30), obj(delta, 5, 10)},
			destination: []objectstore.ObjectVersion{obj(full, 50, 20)}, copy: []string{delta}, inSync: 1, lag: 10 * time.Minute},
		{name: "same size and MD5 where both state it: in sync", source: []objectstore.ObjectVersion{withMD5(obj(full, 50, 30), "aa")},
			destination: []objectstore.ObjectVersion{withMD5(obj(full, 50, 20), "aa")}, inSync: 1},
		{name: "MD5 stated on one side only: size decides", source: []objectstore.ObjectVersion{withMD5(obj(full, 50, 30), "aa")},
			destination: []objectstore.ObjectVersion{obj(full, 50, 20)}, inSync: 1},
		{name: "other MD5, destination newer: kept, a conflict in the lag", source: []objectstore.ObjectVersion{withMD5(obj(full, 50, 30), "aa")},
			destination: []objectstore.ObjectVersion{withMD5(obj(full, 50, 20), "bb")}, conflicts: []string{full}, lag: 30 * time.Minute},
		{name: "other size, destination newer: never overwritten", source: []objectstore.ObjectVersion{obj(full, 50, 30)},
			destination: []objectstore.ObjectVersion{obj(full, 49, 20)}, conflicts: []string{full}, lag: 30 * time.Minute},
		{name: "other size, destination written at the same time: never overwritten", source: []objectstore.ObjectVersion{obj(full, 50, 30)},
			destination: []objectstore.ObjectVersion{obj(full, 49, 30)}, conflicts: []string{full}, lag: 30 * time.Minute},
		{name: "other size, destination older: overwritten", source: []objectstore.ObjectVersion{obj(full, 50, 30)},
			destination: []objectstore.ObjectVersion{obj(full, 49, 40)}, copy: []string{full}, lag: 30 * time.Minute},
		{name: "destination's current version is a delete marker: copied", source: []objectstore.ObjectVersion{obj(full, 50, 30)},
			destination: []objectstore.ObjectVersion{{Key: full, Modified: at(1), Noncurrent: true, DeleteMarker: true}}, copy: []string{full}, lag: 30 * time.Minute},
		{name: "not snapshots: chunks, other keys, another prefix", source: []objectstore.ObjectVersion{
			obj(full+"/0000000001", 5, 30), obj(prefix+"etcd-main/marker", 1, 30), obj("shoot--p--s--10/etcd-main/v2/Full-00000000-00000100-1764392400.gz", 5, 30)}},
		{name: "noncurrent versions, delete markers and blob snapshots of the source: not copied", source: []objectstore.ObjectVersion{
			{Key: full, Size: 50, Modified: at(30), Noncurrent: true}, {Key: delta, Modified: at(30), Noncurrent: true, DeleteMarker: true},
			{Key: delta, Size: 5, Modified: at(30), Noncurrent: true, BlobSnapshot: true}}},
		{name: "excluded by etcd-backup-restore's mark: not copied, not lagging", source: []objectstore.ObjectVersion{
			{Key: full, Size: 50, Modified: at(30), ExcludeMark: true}}, excluded: 1},
		{name: "source written after now (the clocks differ): no negative lag", source: []objectstore.ObjectVersion{obj(full, 50, -5)},
			copy: []string{full}, lag: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := map[string]objectstore.ObjectVersion{}
			for _, d := range c.destination {
				dst[d.Key] = d
			}
			p := decide(prefix, c.source, dst, now)
			var copied, conflicts []string
			for _, o := range p.Copy {
				copied = append(copied, o.Key)
			}
			for _, o := range p.Conflicts {
				conflicts = append(conflicts, o.Source.Key)
			}
			if !slices.Equal(copied, c.copy) || !slices.Equal(conflicts, c.conflicts) || p.InSync != c.inSync || p.Excluded != c.excluded || p.Lag != c.lag {
				t.Errorf("copy %v, conflicts %v, in sync %d, excluded %d, lag %s; want %v, %v, %d, %d, %s",
					copied, conflicts, p.InSync, p.Excluded, p.Lag, c.copy, c.conflicts, c.inSync, c.excluded, c.lag)
			}
			if p.Done() != (len(c.copy) == 0 && len(c.conflicts) == 0) {
				t.Errorf("Done() = %t", p.Done())
			}
		})
	}
}
