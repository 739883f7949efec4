// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package rehearsal

import (
	"fmt"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/seedconfig"
)

// ConditionRehearsal is the condition on the seed's Extension backup-<provider> that sums up the
// last rehearsal (seedconfig.ConditionRehearsal, which the controllers of the switch remove).
const ConditionRehearsal = seedconfig.ConditionRehearsal

// Reasons of ConditionRehearsal.
const (
	ReasonAllAdoptable = "AllAdoptable"
	ReasonNotAdoptable = "NotAdoptable"
	ReasonCannotTell   = "CannotTell"
	// ReasonFailed: the objects could not be listed; nothing was rehearsed.
	ReasonFailed = "RehearsalFailed"
)

// namedInSummary is how many objects a summary names per verdict.
const namedInSummary = 3

// Summary is the condition that sums up reports: False when one object cannot be taken over,
// else Unknown when the rehearsal cannot tell for one, else True. Its message counts both kinds
// and the planned changes, names the first objects not adoptable or not told with their
// reasons, and counts the read-only checks that did not pass.
func Summary(reports []Report) (gardencorev1beta1.ConditionStatus, string, string) {
	type tally struct{ total, adoptable int }
	counts := map[string]*tally{KindBackupBucket: {}, KindBackupEntry: {}}
	var notAdoptable, cannotTell []string
	changes, checksFailed := 0, 0
	for _, r := range reports {
		t := counts[r.Kind]
		if t == nil {
			t = &tally{}
			counts[r.Kind] = t
		}
		t.total++
		switch r.Verdict {
		case Adoptable:
			t.adoptable++
			changes += len(r.Changes)
		case NotAdoptable:
			notAdoptable = append(notAdoptable, fmt.Sprintf("%s %s: %s", r.Kind, r.Name, r.Reason))
		default:
			cannotTell = append(cannotTell, fmt.Sprintf("%s %s: %s", r.Kind, r.Name, r.Reason))
		}
		for _, c := range r.Checks {
			if c.Status != gardencorev1beta1.ConditionTrue {
				checksFailed++
			}
		}
	}
	msg := fmt.Sprintf("%d of %d BackupBuckets and %d of %d BackupEntries can be taken over; their first reconciles would make %d changes",
		counts[KindBackupBucket].adoptable, counts[KindBackupBucket].total, counts[KindBackupEntry].adoptable, counts[KindBackupEntry].total, changes)
	if checksFailed > 0 {
		msg += fmt.Sprintf("; %d read-only checks did not pass", checksFailed)
	}
	msg += drillSummary(reports)
	status, reason := gardencorev1beta1.ConditionTrue, ReasonAllAdoptable
	if len(cannotTell) > 0 {
		status, reason = gardencorev1beta1.ConditionUnknown, ReasonCannotTell
		msg += fmt.Sprintf("; %d cannot be told: %s", len(cannotTell), first(cannotTell))
	}
	if len(notAdoptable) > 0 {
		status, reason = gardencorev1beta1.ConditionFalse, ReasonNotAdoptable
		msg += fmt.Sprintf("; %d cannot be taken over: %s", len(notAdoptable), first(notAdoptable))
	}
	return status, reason, msg + "."
}

// first is the first namedInSummary of names, and how many more.
func first(names []string) string {
	if len(names) <= namedInSummary {
		return strings.Join(names, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(names[:namedInSummary], "; "), len(names)-namedInSummary)
}
