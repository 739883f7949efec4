// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
)

// series are the label sets and values of c's series that have the labels of match.
func series(t *testing.T, c prometheus.Collector, match map[string]string) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1000)
	c.Collect(ch)
	close(ch)
	out := map[string]float64{}
next:
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		key := ""
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
			key += l.GetName() + "=" + l.GetValue() + ","
		}
		for k, v := range match {
			if labels[k] != v {
				continue next
			}
		}
		out[key] = pb.GetGauge().GetValue()
	}
	return out
}

func TestOperationFailingSinceLastsFromTheFirstFailureToASuccess(t *testing.T) {
	const kind, name = metrics.KindBackupBucket, "failing-bucket"
	failing := func() map[string]float64 {
		return series(t, metrics.OperationFailingSince, map[string]string{"kind": kind, "name": name})
	}
	t.Cleanup(func() { metrics.ForgetOperation(kind, name) })

	metrics.CountOperation(kind, metrics.OperationReconcile, name, metrics.OutcomeSucceeded)
	if got := failing(); len(got) != 0 {
		t.Fatalf("after a success: %v; want no series", got)
	}

	metrics.CountOperation(kind, metrics.OperationReconcile, name, "ERR_CONFIGURATION_PROBLEM")
	first := failing()
	since, ok := first["code=ERR_CONFIGURATION_PROBLEM,kind=BackupBucket,name=failing-bucket,operation=reconcile,"]
	if len(first) != 1 || !ok || since <= 0 {
		t.Fatalf("after a failure: %v; want one series with the failure's operation and code", first)
	}

	// Another code (and operation) continues the run of failures: one series, the same start.
	metrics.CountOperation(kind, metrics.OperationDelete, name, "ERR_INFRA_UNAUTHENTICATED")
	second := failing()
	if got, ok := second["code=ERR_INFRA_UNAUTHENTICATED,kind=BackupBucket,name=failing-bucket,operation=delete,"]; len(second) != 1 || !ok || got != since {
		t.Fatalf("after a second failure: %v; want one series with its code and the first failure's time %v", second, since)
	}

	// Another object's failure is its own.
	metrics.CountOperation(metrics.KindBackupEntry, metrics.OperationReconcile, name, "error")
	t.Cleanup(func() { metrics.ForgetOperation(metrics.KindBackupEntry, name) })
	if got := series(t, metrics.OperationFailingSince, map[string]string{"name": name}); len(got) != 2 {
		t.Fatalf("a BackupEntry of the same name failing: %v; want a series of each", got)
	}

	// A deletion that progresses is no failure.
	metrics.CountOperation(kind, metrics.OperationDelete, name, metrics.OutcomeInProgress)
	if got := failing(); len(got) != 0 {
		t.Fatalf("after a pass in progress: %v; want no series", got)
	}
	metrics.CountOperation(kind, metrics.OperationReconcile, name, "error")
	if got := failing(); len(got) != 1 {
		t.Fatalf("failing again: %v", got)
	}
	metrics.CountOperation(kind, metrics.OperationReconcile, name, metrics.OutcomeSucceeded)
	if got := failing(); len(got) != 0 {
		t.Fatalf("after a success: %v; want no series", got)
	}

	// Gone while failing.
	metrics.ForgetOperation(metrics.KindBackupEntry, name)
	if got := series(t, metrics.OperationFailingSince, map[string]string{"name": name}); len(got) != 0 {
		t.Fatalf("after the entry is gone: %v; want no series", got)
	}
}

func TestBackupsFreshCarriesTheEntrysBucket(t *testing.T) {
	const entry = "shoot--p--fresh"
	t.Cleanup(func() { metrics.ForgetEntry(entry) })
	fresh := func() map[string]float64 {
		return series(t, metrics.BackupsFresh, map[string]string{"entry": entry})
	}
	metrics.SetBackupsFresh(entry, "bucket-a", new(true))
	if got := fresh(); len(got) != 1 || got["bucket=bucket-a,entry=shoot--p--fresh,"] != 1 {
		t.Fatalf("fresh: %v", got)
	}
	// Migrated to another bucket and stale there: one series, of the new bucket.
	metrics.SetBackupsFresh(entry, "bucket-b", new(false))
	if got, ok := fresh()["bucket=bucket-b,entry=shoot--p--fresh,"]; len(fresh()) != 1 || !ok || got != 0 {
		t.Fatalf("stale in another bucket: %v", fresh())
	}
	metrics.SetBackupsFresh(entry, "bucket-b", nil)
	if got := fresh(); len(got) != 0 {
		t.Fatalf("unknown: %v; want no series", got)
	}
	metrics.SetBackupsFresh(entry, "bucket-b", new(true))
	metrics.ForgetEntry(entry)
	if got := fresh(); len(got) != 0 {
		t.Fatalf("forgotten: %v; want no series", got)
	}
}

func TestForgetHeadroomRemovesUnreadable(t *testing.T) {
	const bucket = "unreadable-bucket"
	metrics.EntryCredentialsHeadroomUnreadable.WithLabelValues(bucket, "iam").Set(1)
	metrics.ForgetHeadroom(bucket)
	if got := series(t, metrics.EntryCredentialsHeadroomUnreadable, map[string]string{"bucket": bucket}); len(got) != 0 {
		t.Fatalf("after ForgetHeadroom: %v", got)
	}
}
