// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

func TestJudge(t *testing.T) {
	th := DefaultThresholds // full 25h, delta 1h
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	old := now.Add(-48 * time.Hour) // an entry created long ago
	ago := func(d time.Duration) *Snapshot { return snap("k", now.Add(-d)) }
	etcd := func(name string, full, delta *Snapshot) Etcd {
		return Etcd{Name: name, LatestFull: full, LatestDelta: delta}
	}
	inv := func(etcds ...Etcd) *Inventory { return &Inventory{Etcds: etcds} }
	const (
		T = gardencorev1beta1.ConditionTrue
		F = gardencorev1beta1.ConditionFalse
		U = gardencorev1beta1.ConditionUnknown
	)
	tests := []struct {
		name    string
		inv     *Inventory
		created time.Time
		now     time.Time // zero: now
		status  gardencorev1beta1.ConditionStatus
		reason  string
		recheck time.Time
		// message holds each of these.
		message []string
	}{
		{name: "not counted", inv: nil, created: old, status: U, reason: ReasonNotCounted},
		{name: "new entry, nothing yet", inv: inv(), created: now.Add(-time.Hour), status: U, reason: ReasonNoSnapshotYet,
			recheck: now.Add(24 * time.Hour), message: []string{"no full snapshot yet", "1h old"}},
		{name: "new entry, deltas only", inv: inv(etcd("etcd-main", nil, ago(time.Minute))), created: now.Add(-time.Hour),
			status: U, reason: ReasonNoSnapshotYet, recheck: now.Add(24 * time.Hour), message: []string{"etcd-main"}},
		{name: "entry at the full threshold without snapshots", inv: inv(), created: now.Add(-25 * time.Hour),
			status: F, reason: ReasonNoFullSnapshot, message: []string{"25h old (max 25h)"}},
		{name: "old entry, deltas only", inv: inv(etcd("etcd-main", nil, ago(time.Minute))), created: old,
			status: F, reason: ReasonNoFullSnapshot, message: []string{"no full snapshot of etcd-main", "48h old"}},
		{name: "fresh", inv: inv(etcd("etcd-main", ago(2*time.Hour), ago(10*time.Minute))), created: old, status: T, reason: ReasonFresh,
			recheck: now.Add(50*time.Minute + time.Second),
			message: []string{"etcd-main: newest full snapshot 2h old (max 25h), newest snapshot 10m old (max 1h)"}},
		{name: "full newer than every delta counts as the newest delta", inv: inv(etcd("etcd-main", ago(5*time.Minute), ago(3*time.Hour))),
			created: old, status: T, reason: ReasonFresh, recheck: now.Add(55*time.Minute + time.Second), message: []string{"newest snapshot 5m old"}},
		{name: "full only", inv: inv(etcd("etcd-main", ago(30*time.Minute), nil)), created: old, status: T, reason: ReasonFresh,
			recheck: now.Add(30*time.Minute + time.Second)},
		{name: "delta exactly at its threshold", inv: inv(etcd("etcd-main", ago(2*time.Hour), ago(time.Hour))), created: old,
			status: T, reason: ReasonFresh, recheck: now.Add(time.Second)},
		{name: "delta one second past its threshold", inv: inv(etcd("etcd-main", ago(2*time.Hour), ago(time.Hour+time.Second))), created: old,
			status: F, reason: ReasonStale, message: []string{"etcd-main: newest full snapshot 2h old (max 25h), newest snapshot over 1h old (max 1h)"}},
		{name: "sub-second past the threshold is still the same second", inv: inv(etcd("etcd-main", ago(2*time.Hour), ago(time.Hour))), created: old,
			now: now.Add(999 * time.Millisecond), status: T, reason: ReasonFresh, recheck: now.Add(time.Second)},
		{name: "full exactly at its threshold", inv: inv(etcd("etcd-main", ago(25*time.Hour), ago(time.Minute))), created: old,
			status: T, reason: ReasonFresh, recheck: now.Add(time.Second)},
		{name: "full one second past its threshold", inv: inv(etcd("etcd-main", ago(25*time.Hour+time.Second), ago(time.Minute))), created: old,
			status: F, reason: ReasonStale, message: []string{"newest full snapshot over 25h old (max 25h)"}},
		{name: "stale full, minutes", inv: inv(etcd("etcd-main", ago(26*time.Hour+3*time.Minute+20*time.Second), ago(time.Minute))), created: old,
			status: F, reason: ReasonStale, message: []string{"stale backups: etcd-main: newest full snapshot 26h3m old (max 25h), newest snapshot 1m old (max 1h)"}},
		{name: "one of two stale, the stale one named", inv: inv(etcd("etcd-events", ago(2*time.Hour), ago(90*time.Minute)), etcd("etcd-main", ago(time.Hour), ago(time.Minute))),
			created: old, status: F, reason: ReasonStale, message: []string{"stale backups: etcd-events: newest full snapshot 2h old (max 25h), newest snapshot 1h30m old (max 1h)"}},
		{name: "two fresh: the earlier crossing", inv: inv(etcd("etcd-events", ago(time.Hour), ago(20*time.Minute)), etcd("etcd-main", ago(time.Hour), ago(40*time.Minute))),
			created: old, status: T, reason: ReasonFresh, recheck: now.Add(20*time.Minute + time.Second), message: []string{"etcd-events:", "etcd-main:"}},
		{name: "one fresh, one without full, young entry", inv: inv(etcd("etcd-events", nil, ago(time.Minute)), etcd("etcd-main", ago(time.Minute), nil)),
			created: now.Add(-24*time.Hour - 59*time.Minute), status: T, reason: ReasonFresh, recheck: now.Add(time.Minute),
			message: []string{"no full snapshot of etcd-events (only deltas)"}},
		{name: "one fresh, one without full, old entry", inv: inv(etcd("etcd-events", nil, ago(time.Minute)), etcd("etcd-main", ago(time.Minute), nil)),
			created: old, status: F, reason: ReasonNoFullSnapshot, message: []string{"no full snapshot of etcd-events"}},
		{name: "one stale, one without full, young entry", inv: inv(etcd("etcd-events", nil, ago(time.Minute)), etcd("etcd-main", ago(2*time.Hour), nil)),
			created: now.Add(-2 * time.Hour), status: F, reason: ReasonStale, recheck: now.Add(23 * time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := now
			if !tt.now.IsZero() {
				at = tt.now
			}
			got := Judge(tt.inv, th, tt.created, at)
			if got.Status != tt.status || got.Reason != tt.reason || !got.Recheck.Equal(tt.recheck) {
				t.Errorf("Judge = %s %s (recheck %v) %q; want %s %s (recheck %v)", got.Status, got.Reason, got.Recheck, got.Message, tt.status, tt.reason, tt.recheck)
			}
			for _, m := range tt.message {
				if !strings.Contains(got.Message, m) {
					t.Errorf("message %q does not contain %q", got.Message, m)
				}
			}
			// Recheck is when the verdict changes: a second before it is the same, at it not.
			if !got.Recheck.IsZero() {
				if before := Judge(tt.inv, th, tt.created, got.Recheck.Add(-time.Second)); before.Status != got.Status || before.Reason != got.Reason {
					t.Errorf("a second before Recheck the verdict is already %s %s", before.Status, before.Reason)
				}
				if after := Judge(tt.inv, th, tt.created, got.Recheck); after.Status == got.Status && after.Reason == got.Reason {
					t.Errorf("at Recheck %v the verdict is still %s %s", got.Recheck, after.Status, after.Reason)
				}
			}
		})
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                               "0s",
		12 * time.Second:                "12s",
		45*time.Minute + 10*time.Second: "45m10s",
		time.Hour:                       "1h",
		25 * time.Hour:                  "25h",
		26*time.Hour + 3*time.Minute + 29*time.Second: "26h3m",
		26*time.Hour + 3*time.Minute + 30*time.Second: "26h4m",
		-5 * time.Second:        "-5s",
		1500 * time.Millisecond: "2s",
	} {
		if got := age(d); got != want {
			t.Errorf("age(%v) = %q; want %q", d, got, want)
		}
	}
}
