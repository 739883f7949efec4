// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package inventory

import (
	"fmt"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

// Reasons of a Verdict.
const (
	// ReasonNotCounted: there is no inventory (not taken yet, or its listing failed).
	ReasonNotCounted = "NotCounted"
	// ReasonNoSnapshotYet: no full snapshot yet, but the entry is younger than the full
	// snapshot's maximum age, so none is overdue.
	ReasonNoSnapshotYet = "NoSnapshotYet"
	// ReasonNoFullSnapshot: the entry is older than the full snapshot's maximum age and an etcd
	// (or the whole entry) has no full snapshot: nothing to restore from.
	ReasonNoFullSnapshot = "NoFullSnapshot"
	// ReasonStale: an etcd's newest full or newest snapshot is older than its threshold.
	ReasonStale = "Stale"
	// ReasonFresh: every etcd's snapshots are within their thresholds.
	ReasonFresh = "Fresh"
)

// Verdict is whether an entry's backups are fresh.
type Verdict struct {
	Status  gardencorev1beta1.ConditionStatus
	Reason  string
	Message string
	// Recheck is the earliest moment at which the verdict (status or reason) changes by the
	// passage of time alone, so that the caller can requeue then; zero when it never does.
	Recheck time.Time
}

// Judge tells from inv whether the backups of an entry created at created are fresh at now.
//
// Snapshot names hold whole seconds, so ages are counted in whole seconds (now is truncated):
// an age exactly at its threshold is fresh, one second more is stale, and Recheck is the first
// second at which that happens.
func Judge(inv *Inventory, t Thresholds, created, now time.Time) Verdict {
	if inv == nil {
		return Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonNotCounted,
			Message: "the entry's backups have not been counted"}
	}
	now = now.Truncate(time.Second)
	// An etcd that has written deltas but no full snapshot is overdue once the entry is as old as
	// a full snapshot may be; until then it may still be on its way (the same grace the whole
	// entry gets).
	fullOverdueAt := created.Add(t.FullSnapshotMaxAge)
	graceOver := !now.Before(fullOverdueAt)

	var fresh, stale, noFull []string
	var recheck time.Time
	earliest := func(at time.Time) {
		if recheck.IsZero() || at.Before(recheck) {
			recheck = at
		}
	}
	for _, e := range inv.Etcds {
		if e.LatestFull == nil {
			// An etcd is listed only for a snapshot it has: without a full one, deltas.
			noFull = append(noFull, e.Name)
			continue
		}
		full := e.LatestFull.Time.Time
		// A full snapshot newer than every delta is the newest state there is: it counts as the
		// newest delta too.
		newestAny := full
		if e.LatestDelta != nil && e.LatestDelta.Time.After(newestAny) {
			newestAny = e.LatestDelta.Time.Time
		}
		fullAge, deltaAge := now.Sub(full), now.Sub(newestAny)
		line := fmt.Sprintf("%s: newest full snapshot %s old (max %s), newest snapshot %s old (max %s)",
			e.Name, ageAgainst(fullAge, t.FullSnapshotMaxAge), age(t.FullSnapshotMaxAge), ageAgainst(deltaAge, t.DeltaSnapshotMaxAge), age(t.DeltaSnapshotMaxAge))
		if fullAge > t.FullSnapshotMaxAge || deltaAge > t.DeltaSnapshotMaxAge {
			stale = append(stale, line)
			continue
		}
		fresh = append(fresh, line)
		// Stale one second after either age reaches its threshold.
		earliest(full.Add(t.FullSnapshotMaxAge + time.Second))
		earliest(newestAny.Add(t.DeltaSnapshotMaxAge + time.Second))
	}

	noFullLine := func() string {
		if len(noFull) == 0 {
			return ""
		}
		return fmt.Sprintf("no full snapshot of %s (only deltas); ", strings.Join(noFull, ", "))
	}
	switch {
	case len(fresh)+len(stale) == 0 && !graceOver:
		return Verdict{Status: gardencorev1beta1.ConditionUnknown, Reason: ReasonNoSnapshotYet,
			Message: fmt.Sprintf("%sno full snapshot yet; the entry is %s old, one is due within %s",
				noFullLine(), age(now.Sub(created)), age(t.FullSnapshotMaxAge)),
			Recheck: fullOverdueAt}
	case len(fresh)+len(stale) == 0:
		return Verdict{Status: gardencorev1beta1.ConditionFalse, Reason: ReasonNoFullSnapshot,
			Message: fmt.Sprintf("%sno full snapshot in the entry, which is %s old (max %s)",
				noFullLine(), age(now.Sub(created)), age(t.FullSnapshotMaxAge))}
	case len(noFull) > 0 && graceOver:
		// Worse than stale: that etcd cannot be restored at all. Stale ones are named too.
		return Verdict{Status: gardencorev1beta1.ConditionFalse, Reason: ReasonNoFullSnapshot,
			Message: strings.Join(append([]string{fmt.Sprintf("no full snapshot of %s, the entry is %s old (max %s)",
				strings.Join(noFull, ", "), age(now.Sub(created)), age(t.FullSnapshotMaxAge))}, stale...), "; ")}
	}
	if len(noFull) > 0 {
		// Not overdue yet: the verdict changes when it becomes so.
		earliest(fullOverdueAt)
	}
	if len(stale) > 0 {
		v := Verdict{Status: gardencorev1beta1.ConditionFalse, Reason: ReasonStale,
			Message: noFullLine() + "stale backups: " + strings.Join(stale, "; ")}
		if len(noFull) > 0 {
			// Only the reason changes, from Stale to NoFullSnapshot; stale etcds stay stale.
			v.Recheck = fullOverdueAt
		}
		return v
	}
	return Verdict{Status: gardencorev1beta1.ConditionTrue, Reason: ReasonFresh,
		Message: noFullLine() + strings.Join(fresh, "; "), Recheck: recheck}
}

// ageAgainst is age(d), but says "over <max>" where rounding would make an age past max read as
// max itself ("1h old (max 1h)" one second after the threshold).
func ageAgainst(d, limit time.Duration) string {
	if d > limit && age(d) == age(limit) {
		return "over " + age(limit)
	}
	return age(d)
}

// age writes d as hours, minutes and seconds without zero tails ("26h3m", "25h", "45m10s"),
// rounded to the minute from an hour on: more precision does not help a reader there.
func age(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	if d >= time.Hour {
		d = d.Round(time.Minute)
	} else {
		d = d.Round(time.Second)
	}
	h, m, s := int64(d/time.Hour), int64(d%time.Hour/time.Minute), int64(d%time.Minute/time.Second)
	var b strings.Builder
	b.WriteString(sign)
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if s > 0 || (h == 0 && m == 0) {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}
