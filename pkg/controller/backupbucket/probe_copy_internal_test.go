// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"strings"
	"testing"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
)

// declareCopy sets the probed bucket's config to declare a copy (copy.credentialsRef
// backup-copy, the copy bucket probed-copy), or none.
func (f *probeFixture) declareCopy(declared bool) {
	f.t.Helper()
	cfg := controllertest.Config{}
	if declared {
		cfg.Copy = &copystore.Settings{CredentialsRef: "backup-copy"}
	}
	f.configure(cfg)
}

func (f *probeFixture) copyCondition() *gardencorev1beta1.Condition {
	return v1beta1helper.GetCondition(f.bucket().Status.Conditions, ConditionCopyBucketAvailable)
}

func copyAvailable(t *testing.T) (float64, int) {
	t.Helper()
	n := testutil.CollectAndCount(metrics.CopyBucketAvailable)
	if n == 0 {
		return -1, 0
	}
	return testutil.ToFloat64(metrics.CopyBucketAvailable.WithLabelValues("probed", "probed-copy")), n
}

// TestProbeOfTheCopyBucket: the copy bucket is probed on the primary's schedule with the copy's
// credentials (garden/ref-<credentialsRef>) into CopyBucketAvailable and copy_bucket_available;
// whatever the copy's state, BucketAvailable stays the primary's; a copy no longer declared
// loses its condition and its series.
func TestProbeOfTheCopyBucket(t *testing.T) {
	f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)
	f.declareCopy(true)
	step := func(what string, wantStatus gardencorev1beta1.ConditionStatus, wantReason string, wantGauge float64, wantEvent string) {
		t.Helper()
		f.clock.Step(interval + interval/10)
		primary, _ := f.probe()
		if primary == nil || primary.Status != gardencorev1beta1.ConditionTrue {
			t.Fatalf("%s: BucketAvailable %+v; the copy must not change the primary's verdict", what, primary)
		}
		c := f.copyCondition()
		if c == nil || c.Status != wantStatus || c.Reason != wantReason || !strings.Contains(c.Message, `"probed-copy"`) || !strings.Contains(c.Message, "garden/ref-backup-copy") {
			t.Fatalf("%s: CopyBucketAvailable %+v; want %s/%s naming the copy bucket and its secret", what, c, wantStatus, wantReason)
		}
		if strings.Contains(c.Message, `"copy"`) {
			t.Errorf("%s: the message holds a secret value: %q", what, c.Message)
		}
		if got, n := copyAvailable(t); got != wantGauge || n != 1 {
			t.Errorf("%s: copy_bucket_available = %v (%d series); want %v, one series", what, got, n, wantGauge)
		}
		if ev := strings.Join(f.events(), "\n"); wantEvent != "" && !strings.Contains(ev, wantEvent) || wantEvent == "" && strings.Contains(ev, "CopyBucket") {
			t.Errorf("%s: events %q; want %q", what, ev, wantEvent)
		}
	}

	step("without the copy's secret", gardencorev1beta1.ConditionFalse, "SecretMissing", 0, "Warning CopyBucketUnavailable")
	f.createCopySecret()
	step("secret there, copy bucket not", gardencorev1beta1.ConditionFalse, "BucketNotFound", 0, "Warning CopyBucketUnavailable")
	f.createCopyBucket()
	step("copy bucket there", gardencorev1beta1.ConditionTrue, "Available", 1, "Normal CopyBucketAvailable")
	step("unchanged", gardencorev1beta1.ConditionTrue, "Available", 1, "")
	f.revoked["copy"] = true
	step("the copy's key revoked", gardencorev1beta1.ConditionFalse, "Unauthenticated", 0, "Warning CopyBucketUnavailable")
	delete(f.revoked, "copy")
	step("repaired", gardencorev1beta1.ConditionTrue, "Available", 1, "Normal CopyBucketAvailable")

	f.declareCopy(false)
	f.clock.Step(interval + interval/10)
	if primary, _ := f.probe(); primary == nil || primary.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("BucketAvailable %+v", primary)
	}
	if c := f.copyCondition(); c != nil {
		t.Errorf("CopyBucketAvailable %+v with no copy declared; want none", c)
	}
	if _, n := copyAvailable(t); n != 0 {
		t.Errorf("%d copy_bucket_available series with no copy declared", n)
	}
}

// TestProbeOfACopyThatIsThePrimary: a copy bucket named as the BackupBucket is refused
// (CopyBucketReady False CopyBucketInvalid); it is not probed as a copy.
func TestProbeOfACopyThatIsThePrimary(t *testing.T) {
	f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)
	f.configure(controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy", BucketName: "probed"}}})
	if primary, _ := f.probe(); primary == nil || primary.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("BucketAvailable %+v", primary)
	}
	if c := f.copyCondition(); c != nil {
		t.Errorf("CopyBucketAvailable %+v for a copy that is the primary; want none", c)
	}
	if _, n := copyAvailable(t); n != 0 {
		t.Errorf("%d copy_bucket_available series for a refused copy", n)
	}
}

// TestProbeOfACopyThisBinaryCannotWrite: a copy CopyPlaceOf refuses (a copy.type the binary
// writes no copy of) loses CopyBucketAvailable and its series, as a copy no longer declared: the
// reconcile reports it in CopyBucketReady.
func TestProbeOfACopyThisBinaryCannotWrite(t *testing.T) {
	f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)
	f.declareCopy(true)
	f.createCopySecret()
	f.createCopyBucket()
	f.probe()
	if c := f.copyCondition(); c == nil || c.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("CopyBucketAvailable %+v; want True before the type changes", c)
	}
	f.configure(controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{Type: "local", CredentialsRef: "backup-copy"}}})
	f.clock.Step(interval + interval/10)
	if primary, _ := f.probe(); primary == nil || primary.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("BucketAvailable %+v", primary)
	}
	if c := f.copyCondition(); c != nil {
		t.Errorf("CopyBucketAvailable %+v for a copy this binary cannot write; want none", c)
	}
	if _, n := copyAvailable(t); n != 0 {
		t.Errorf("%d copy_bucket_available series for a refused copy; want none", n)
	}
}
