// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
)

// TestDecideFailover: the automatic failover is recorded only after the primary's probe was
// False for copy.failover.after with the copy available and converged, and a record is never
// undone by the stores' state: only by copy.serve: copy (adopted) or no copy declared.
func TestDecideFailover(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cond := func(status gardencorev1beta1.ConditionStatus, since time.Duration) *gardencorev1beta1.Condition {
		return &gardencorev1beta1.Condition{Status: status, Reason: "Unreachable", Message: "Bucket \"b\" did not answer", LastTransitionTime: metav1.NewTime(now.Add(-since))}
	}
	down := func(since time.Duration) failoverObserved {
		return failoverObserved{declared: true, after: 10 * time.Minute, now: now, copyBucket: "b-copy",
			primary: cond(gardencorev1beta1.ConditionFalse, since), copyAvailable: cond(gardencorev1beta1.ConditionTrue, time.Hour), copyReady: cond(gardencorev1beta1.ConditionTrue, time.Hour)}
	}
	with := func(o failoverObserved, f func(*failoverObserved)) failoverObserved { f(&o); return o }
	rec := &connect.FailoverRecord{CopyBucket: "b-copy", Reason: "Unreachable"}
	cases := []struct {
		name   string
		o      failoverObserved
		action failoverAction
		reason string
		saying string
	}{
		{name: "the primary down for after, the copy fine: recorded", o: down(10 * time.Minute), action: failoverRecord, reason: ReasonFailoverRecorded, saying: `served from the copy bucket "b-copy"`},
		{name: "the primary down for less than after", o: down(9 * time.Minute), action: failoverKeep},
		{name: "no policy", o: with(down(time.Hour), func(o *failoverObserved) { o.after = 0 }), action: failoverKeep},
		{name: "no copy declared", o: with(down(time.Hour), func(o *failoverObserved) { o.declared = false }), action: failoverKeep},
		{name: "serve copy already", o: with(down(time.Hour), func(o *failoverObserved) { o.servesCopy = true }), action: failoverKeep},
		{name: "the primary Unknown (throttled): no proof", o: with(down(time.Hour), func(o *failoverObserved) { o.primary = cond(gardencorev1beta1.ConditionUnknown, time.Hour) }), action: failoverKeep},
		{name: "the primary available", o: with(down(time.Hour), func(o *failoverObserved) { o.primary = cond(gardencorev1beta1.ConditionTrue, time.Hour) }), action: failoverKeep},
		{name: "the primary never probed", o: with(down(time.Hour), func(o *failoverObserved) { o.primary = nil }), action: failoverKeep},
		{name: "the copy unavailable", o: with(down(time.Hour), func(o *failoverObserved) { o.copyAvailable = cond(gardencorev1beta1.ConditionFalse, time.Hour) }), action: failoverKeep},
		{name: "the copy not probed", o: with(down(time.Hour), func(o *failoverObserved) { o.copyAvailable = nil }), action: failoverKeep},
		{name: "the copy not converged", o: with(down(time.Hour), func(o *failoverObserved) { o.copyReady = cond(gardencorev1beta1.ConditionFalse, time.Hour) }), action: failoverKeep},
		{name: "recorded, the primary back: kept (no flapping)", o: with(down(0), func(o *failoverObserved) {
			o.primary, o.recorded = cond(gardencorev1beta1.ConditionTrue, time.Minute), rec
		}), action: failoverKeep},
		{name: "recorded, the copy gone: kept", o: with(down(time.Hour), func(o *failoverObserved) {
			o.copyAvailable, o.recorded = cond(gardencorev1beta1.ConditionFalse, time.Minute), rec
		}), action: failoverKeep},
		{name: "recorded, the policy removed: kept", o: with(down(time.Hour), func(o *failoverObserved) { o.after, o.recorded = 0, rec }), action: failoverKeep},
		{name: "recorded, serve copy set: adopted, the record ends", o: with(down(time.Hour), func(o *failoverObserved) { o.servesCopy, o.recorded = true, rec }),
			action: failoverClear, reason: ReasonFailoverAdopted, saying: "copy.serve: primary is the way back"},
		{name: "recorded, no copy declared: the record ends", o: with(down(time.Hour), func(o *failoverObserved) { o.declared, o.recorded = false, rec }),
			action: failoverClear, reason: ReasonFailoverForgotten},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decideFailover(c.o)
			if got.action != c.action || got.reason != c.reason || !strings.Contains(got.message, c.saying) {
				t.Fatalf("got %+v; want action %v, reason %q, saying %q", got, c.action, c.reason, c.saying)
			}
			if got.action == failoverRecord && (got.record == nil || got.record.CopyBucket != "b-copy" || !got.record.At.Time.Equal(now) || got.record.Reason != "Unreachable") {
				t.Fatalf("record %+v", got.record)
			}
		})
	}
}
