// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
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
		{name: "recorded, no copy declared: kept (the conflict is reported, nothing moves)", o: with(down(time.Hour), func(o *failoverObserved) { o.declared, o.copyBucket, o.recorded = false, "", rec }),
			action: failoverKeep},
		{name: "recorded, another copy bucket declared: kept", o: with(down(time.Hour), func(o *failoverObserved) { o.copyBucket, o.recorded = "b-copy2", rec }),
			action: failoverKeep},
		{name: "recorded, another copy bucket declared, serve copy: kept (not adopted)", o: with(down(time.Hour), func(o *failoverObserved) { o.copyBucket, o.servesCopy, o.recorded = "b-copy2", true, rec }),
			action: failoverKeep},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decideFailover(c.o)
			if got.action != c.action || got.reason != c.reason || !strings.Contains(got.message, c.saying) {
				t.Fatalf("got %+v; want action %v, reason %q, saying %q", got, c.action, c.reason, c.saying)
			}
			if servedBy := c.action == failoverRecord || (c.o.recorded != nil && c.action == failoverKeep && c.o.copyBucket == c.o.recorded.CopyBucket && c.o.declared); (got.serving != nil) != servedBy {
				t.Fatalf("serving %+v; want the entries served by a record: %v", got.serving, servedBy)
			}
			if got.action == failoverRecord && (got.record == nil || got.record.CopyBucket != "b-copy" || !got.record.At.Time.Equal(now) || got.record.Reason != "Unreachable") {
				t.Fatalf("record %+v", got.record)
			}
		})
	}
}

// TestAutomaticFailoverByTheProbe: with copy.failover.after 10m the probe records the failover
// once BucketAvailable has been False for 10 minutes while the copy is available and converged,
// asks for the reconcile of the BackupBucket and of its entries, and the entries are then served
// from the copy (connect.ServeOf: CopyByPolicy). The primary coming back changes nothing; the
// record ends when the operator sets copy.serve: copy.
func TestAutomaticFailoverByTheProbe(t *testing.T) {
	ctx := context.Background()
	f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)
	settings := &copystore.Settings{CredentialsRef: "backup-copy", Failover: &copystore.Failover{After: &metav1.Duration{Duration: 10 * time.Minute}}}
	cfg := controllertest.Config{CopyField: copystore.CopyField{Copy: settings}}
	f.configure(cfg)
	bb := f.bucket()
	bb.Status.Conditions = append(bb.Status.Conditions, gardencorev1beta1.Condition{Type: ConditionCopyBucketReady, Status: gardencorev1beta1.ConditionTrue, Reason: ReasonCopyBucketReady})
	if err := f.client.Status().Update(ctx, bb); err != nil {
		t.Fatal(err)
	}
	f.createCopySecret()
	f.createCopyBucket()
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--p--x--1"},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem", ProviderConfig: controllertest.RawConfig(cfg)}, BucketName: "probed", SecretRef: controllertest.SecretRef}}
	if err := f.client.Create(ctx, be); err != nil {
		t.Fatal(err)
	}
	record := func() *connect.FailoverRecord {
		t.Helper()
		rec, err := connect.FailoverRecordOf(f.bucket())
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	served := func() connect.ServePlan {
		t.Helper()
		got := &extensionsv1alpha1.BackupEntry{}
		if err := f.client.Get(ctx, client.ObjectKeyFromObject(be), got); err != nil {
			t.Fatal(err)
		}
		plan, _, err := connect.ServeOf(ctx, f.client, f.prober.Provider, got, false)
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	probe := func(what string, want gardencorev1beta1.ConditionStatus) {
		t.Helper()
		f.clock.Step(interval + interval/10)
		if c, _ := f.probe(); c == nil || c.Status != want {
			t.Fatalf("%s: BucketAvailable %+v; want %s", what, c, want)
		}
	}

	f.revoked["operator"] = true
	probe("the primary down", gardencorev1beta1.ConditionFalse)
	if rec := record(); rec != nil {
		t.Fatalf("recorded at once: %+v", rec)
	}
	probe("the primary down for 5.5m", gardencorev1beta1.ConditionFalse)
	if rec := record(); rec != nil {
		t.Fatalf("recorded before 10m: %+v", rec)
	}
	if plan := served(); plan.FromCopy {
		t.Fatalf("served before the failover: %+v", plan)
	}
	probe("the primary down for 11m", gardencorev1beta1.ConditionFalse)
	rec := record()
	if rec == nil || rec.CopyBucket != "probed-copy" || rec.Reason != "Unauthenticated" {
		t.Fatalf("record %+v; want the failover to probed-copy, why", rec)
	}
	if ev := strings.Join(f.events(), "\n"); !strings.Contains(ev, "Warning "+ReasonFailoverRecorded) {
		t.Fatalf("events %q; want %s", ev, ReasonFailoverRecorded)
	}
	got := &extensionsv1alpha1.BackupEntry{}
	if err := f.client.Get(ctx, client.ObjectKeyFromObject(be), got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations[v1beta1constants.GardenerOperation] != v1beta1constants.GardenerOperationReconcile || f.bucket().Annotations[v1beta1constants.GardenerOperation] != v1beta1constants.GardenerOperationReconcile {
		t.Fatalf("entry %v, bucket %v; want both asked to reconcile", got.Annotations, f.bucket().Annotations)
	}
	if plan := served(); !plan.FromCopy || plan.Reason != connect.ServeReasonCopyByPolicy {
		t.Fatalf("after the failover: %+v; want the copy by policy", plan)
	}

	delete(f.revoked, "operator")
	probe("the primary back", gardencorev1beta1.ConditionTrue)
	if again := record(); again == nil || !again.At.Equal(&rec.At) {
		t.Fatalf("the primary back: record %+v; want it kept as it was (no flapping)", again)
	}
	if plan := served(); !plan.FromCopy {
		t.Fatalf("the primary back: %+v; want the copy still", plan)
	}
	f.events()

	settings.Serve = copystore.ServeCopy
	f.configure(cfg)
	probe("serve copy set", gardencorev1beta1.ConditionTrue)
	if rec := record(); rec != nil {
		t.Fatalf("adopted: record %+v; want none", rec)
	}
	if ev := strings.Join(f.events(), "\n"); !strings.Contains(ev, "Normal "+ReasonFailoverAdopted) {
		t.Fatalf("events %q; want %s", ev, ReasonFailoverAdopted)
	}
}

// TestRecordedFailoverAsksEveryLook: while a failover is recorded, every look asks for the
// reconcile of each entry of the bucket whose etcd-backup does not name the copy yet (the look
// that recorded may have failed half-way), leaves alone those that name the copy, those asked
// already and other buckets' entries; adopting the record (copy.serve: copy) asks nobody.
func TestRecordedFailoverAsksEveryLook(t *testing.T) {
	ctx := context.Background()
	f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)
	settings := &copystore.Settings{CredentialsRef: "backup-copy", Failover: &copystore.Failover{After: &metav1.Duration{Duration: 10 * time.Minute}}}
	cfg := controllertest.Config{CopyField: copystore.CopyField{Copy: settings}}
	f.configure(cfg)
	bb := f.bucket()
	if _, err := MergeProviderStatus(bb, func(ps *ProviderStatus) {
		ps.Failover = &connect.FailoverRecord{At: metav1.NewTime(f.clock.Now()), CopyBucket: "probed-copy", Reason: "Unreachable"}
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Status().Update(ctx, bb); err != nil {
		t.Fatal(err)
	}
	f.createCopySecret()
	f.createCopyBucket()
	entry := func(name, bucket, named, operation string) {
		t.Helper()
		be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem"}, BucketName: bucket, SecretRef: controllertest.SecretRef}}
		if operation != "" {
			be.Annotations = map[string]string{v1beta1constants.GardenerOperation: operation}
		}
		if err := f.client.Create(ctx, be); err != nil {
			t.Fatal(err)
		}
		if named == "" {
			return
		}
		ns := strings.TrimSuffix(name, "--1")
		if err := f.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1beta1constants.BackupSecretName},
			Data: map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte(named)}}); err != nil {
			t.Fatal(err)
		}
	}
	entry("shoot--p--primary--1", "probed", "probed", "")
	entry("shoot--p--nosecret--1", "probed", "", "")
	entry("shoot--p--switched--1", "probed", "probed-copy", "")
	entry("shoot--p--restore--1", "probed", "probed", v1beta1constants.GardenerOperationRestore)
	entry("shoot--p--other--1", "other", "other", "")
	operation := func(name string) string {
		t.Helper()
		be := &extensionsv1alpha1.BackupEntry{}
		if err := f.client.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
			t.Fatal(err)
		}
		return be.Annotations[v1beta1constants.GardenerOperation]
	}
	unask := func(name string) {
		t.Helper()
		be := &extensionsv1alpha1.BackupEntry{}
		if err := f.client.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
			t.Fatal(err)
		}
		delete(be.Annotations, v1beta1constants.GardenerOperation)
		if err := f.client.Update(ctx, be); err != nil {
			t.Fatal(err)
		}
	}

	f.clock.Step(interval + interval/10)
	f.probe()
	want := map[string]string{"shoot--p--primary--1": "reconcile", "shoot--p--nosecret--1": "reconcile", "shoot--p--switched--1": "",
		"shoot--p--restore--1": v1beta1constants.GardenerOperationRestore, "shoot--p--other--1": ""}
	for name, op := range want {
		if got := operation(name); got != op {
			t.Errorf("%s: operation %q; want %q", name, got, op)
		}
	}
	if got := f.bucket().Annotations[v1beta1constants.GardenerOperation]; got != v1beta1constants.GardenerOperationReconcile {
		t.Errorf("bucket: operation %q; want reconcile (BackupsServedFrom is not CopyByPolicy yet)", got)
	}

	// Adopted: serving does not change, nobody is asked.
	unask("shoot--p--primary--1")
	unask("shoot--p--nosecret--1")
	settings.Serve = copystore.ServeCopy
	f.configure(cfg)
	f.clock.Step(interval + interval/10)
	f.probe()
	if rec, _ := connect.FailoverRecordOf(f.bucket()); rec != nil {
		t.Fatalf("adopted: record %+v; want none", rec)
	}
	for _, name := range []string{"shoot--p--primary--1", "shoot--p--nosecret--1"} {
		if got := operation(name); got != "" {
			t.Errorf("adopted: %s: operation %q; want none", name, got)
		}
	}
}
