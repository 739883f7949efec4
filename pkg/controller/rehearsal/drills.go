// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package rehearsal

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
)

// CheckBackupsRestorable is the restore drill's check (Options.Drills): BackupsRestorable as the
// drill controller would set it.
const CheckBackupsRestorable = string(restoredrill.ConditionBackupsRestorable)

// drillEntry drills be once with d into a report, writing nothing anywhere (reportSink), and is
// its check; ok is false where the entry is not drilled: a migration's source entry, whose prefix
// is its restored entry's (that entry's drill covers it).
func drillEntry(ctx context.Context, d restoredrill.Driller, be *extensionsv1alpha1.BackupEntry) (Check, bool) {
	if entryinfo.IsSourceEntry(be) {
		return Check{}, false
	}
	var sink reportSink
	_, v, err := d.Drill(ctx, be, &sink, nil, nil)
	if err != nil {
		// ctx ended: the pass is cut short, and what it publishes must not say this entry drilled.
		return Check{Name: CheckBackupsRestorable, Status: gardencorev1beta1.ConditionUnknown, Reason: restoredrill.ReasonDrillFailed,
			Message: fmt.Sprintf("The restore drill proved nothing: %v.", err)}, true
	}
	return Check{Name: CheckBackupsRestorable, Status: v.Status, Reason: v.Reason, Message: v.Message}, true
}

// reportSink is the rehearsal's restoredrill.Sink: the drill's verdict goes into the report only.
// Start and Abandon write nothing (no mark on the entry: the entry is the incumbent's, and a
// rehearsal killed during a drill loses only its pass); Publish keeps the verdict for the caller.
type reportSink struct {
	published *restoredrill.Verdict
}

var _ restoredrill.Sink = (*reportSink)(nil)

func (*reportSink) Start(context.Context, *extensionsv1alpha1.BackupEntry) error { return nil }

func (*reportSink) Abandon(context.Context, *extensionsv1alpha1.BackupEntry) {}

func (s *reportSink) Publish(_ context.Context, _ *extensionsv1alpha1.BackupEntry, _ *drill.Status, _ *drill.Status, v restoredrill.Verdict) error {
	s.published = &v
	return nil
}

// restorable is r's BackupsRestorable as a gauge: true or false where it was drilled and found
// True or False, nil where it was not drilled or nothing was proven (Unknown).
func restorable(r Report) *bool {
	for _, c := range r.Checks {
		if c.Name != CheckBackupsRestorable || c.Status == gardencorev1beta1.ConditionUnknown {
			continue
		}
		ok := c.Status == gardencorev1beta1.ConditionTrue
		return &ok
	}
	return nil
}

// drillSummary counts the entries drilled by their BackupsRestorable, for the summary ("" when
// none was drilled).
func drillSummary(reports []Report) string {
	counts := map[gardencorev1beta1.ConditionStatus]int{}
	drilled := 0
	for _, r := range reports {
		for _, c := range r.Checks {
			if c.Name == CheckBackupsRestorable {
				counts[c.Status]++
				drilled++
			}
		}
	}
	if drilled == 0 {
		return ""
	}
	return fmt.Sprintf("; restore drills of %d BackupEntries: %d restorable, %d not restorable, %d proved nothing",
		drilled, counts[gardencorev1beta1.ConditionTrue], counts[gardencorev1beta1.ConditionFalse], counts[gardencorev1beta1.ConditionUnknown])
}
