// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// headroomIssuer answers Headroom only (the bucket's look calls nothing else of an entry issuer).
type headroomIssuer struct {
	objectstore.EntryCredentialIssuer

	headroom objectstore.Headroom
	err      error
}

func (h *headroomIssuer) Headroom(context.Context) (objectstore.Headroom, error) {
	return h.headroom, h.err
}

// withEntryCredentials gives the fixture's bucket entryCredentials (on: issuer "fake") and an
// entry issuer answering issuer's figures.
func (f *probeFixture) withEntryCredentials(on bool, issuer *headroomIssuer) {
	f.t.Helper()
	f.prober.Provider = provider.Register(revocable{controllertest.Provider{Store: f.mem, EntryIssuer: issuer}, f.revoked})
	cfg := controllertest.Config{}
	if on {
		cfg.Entry = &credentials.EntrySettings{Issuer: "fake"}
	}
	f.configure(cfg)
}

func (f *probeFixture) headroomCondition() *gardencorev1beta1.Condition {
	f.clock.Step(interval) // the probe's next look is due
	f.probe()
	return v1beta1helper.GetCondition(f.bucket().Status.Conditions, ConditionEntryCredentialsHeadroom)
}

// series is the bucket's headroom and limit series (-1: absent).
func series() (left, limit float64) {
	left, limit = -1, -1
	if testutil.CollectAndCount(metrics.EntryCredentialsHeadroom) > 0 {
		left = testutil.ToFloat64(metrics.EntryCredentialsHeadroom.WithLabelValues("probed", "fake"))
	}
	if testutil.CollectAndCount(metrics.EntryCredentialsLimit) > 0 {
		limit = testutil.ToFloat64(metrics.EntryCredentialsLimit.WithLabelValues("probed", "fake"))
	}
	return left, limit
}

// unreadableSeries is the bucket's headroom_unreadable series (-1: absent).
func unreadableSeries() float64 {
	if testutil.CollectAndCount(metrics.EntryCredentialsHeadroomUnreadable) == 0 {
		return -1
	}
	return testutil.ToFloat64(metrics.EntryCredentialsHeadroomUnreadable.WithLabelValues("probed", "fake"))
}

func TestEntryCredentialsHeadroom(t *testing.T) {
	for _, tc := range []struct {
		name              string
		headroom          objectstore.Headroom
		err               error
		status            gardencorev1beta1.ConditionStatus
		reason            string
		says              []string
		left, limit       float64
		warning, askAgain bool
	}{
		{name: "sufficient", headroom: objectstore.Headroom{Used: 100, Limit: 5000, Principals: "IAM users of the account"},
			status: gardencorev1beta1.ConditionTrue, reason: ReasonHeadroomSufficient, says: []string{"100 of 5000 IAM users of the account used, 4900 left", "not this bucket's"},
			left: 4900, limit: 5000, askAgain: true},
		{name: "low", headroom: objectstore.Headroom{Used: 4600, Limit: 5000, Principals: "IAM users of the account"},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonHeadroomLow, says: []string{"400 left", "give this seed's backups an account of their own"},
			left: 400, limit: 5000, warning: true, askAgain: true},
		{name: "exhausted", headroom: objectstore.Headroom{Used: 5000, Limit: 5000, Principals: "IAM users of the account"},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonHeadroomExhausted, says: []string{"0 left", "ERR_INFRA_QUOTA_EXCEEDED", "allowBucketCredentialAtQuota"},
			left: 0, limit: 5000, warning: true},
		{name: "unbounded", headroom: objectstore.Headroom{Unbounded: true, Principals: "MinIO service accounts"},
			status: gardencorev1beta1.ConditionTrue, reason: ReasonHeadroomUnbounded, says: []string{"no limit of MinIO service accounts"},
			left: -1, limit: -1, askAgain: true},
		{name: "unreadable", err: fmt.Errorf("reading the account's summary: %w", objectstore.ErrForbidden),
			status: gardencorev1beta1.ConditionUnknown, reason: ReasonHeadroomUnreadable, says: []string{"iam:GetAccountSummary", "forbidden"},
			left: -1, limit: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)
			// Entries of the bucket: two fell back at the quota, one holds its own, one is another bucket's.
			for _, e := range []struct{ name, bucket, reason string }{
				{"shoot--p--a", "probed", entryinfo.ReasonBucketWideAtQuota},
				{"shoot--p--b", "probed", entryinfo.ReasonBucketWideAtQuota},
				{"shoot--p--c", "probed", "OwnPrefix"},
				{"shoot--p--d", "other", entryinfo.ReasonBucketWideAtQuota},
			} {
				be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: e.name}, Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: e.bucket}}
				be.Status.Conditions = []gardencorev1beta1.Condition{{Type: entryinfo.ConditionEntryCredentials, Status: gardencorev1beta1.ConditionFalse, Reason: e.reason}}
				if err := f.client.Create(ctx, be); err != nil {
					t.Fatal(err)
				}
			}
			f.withEntryCredentials(true, &headroomIssuer{headroom: tc.headroom, err: tc.err})
			f.events()
			c := f.headroomCondition()
			if c == nil || c.Status != tc.status || c.Reason != tc.reason {
				t.Fatalf("condition %+v; want %s/%s", c, tc.status, tc.reason)
			}
			for _, s := range tc.says {
				if !strings.Contains(c.Message, s) {
					t.Fatalf("message %q; want it to say %q", c.Message, s)
				}
			}
			if left, limit := series(); left != tc.left || limit != tc.limit {
				t.Fatalf("series headroom %v, limit %v; want %v, %v (-1: absent)", left, limit, tc.left, tc.limit)
			}
			wantUnreadable := -1.0
			if tc.reason == ReasonHeadroomUnreadable {
				wantUnreadable = 1
			}
			if got := unreadableSeries(); got != wantUnreadable {
				t.Fatalf("series headroom_unreadable %v; want %v (-1: absent)", got, wantUnreadable)
			}
			warned := false
			for _, e := range f.events() {
				warned = warned || strings.HasPrefix(e, "Warning "+ReasonHeadroomChanged)
			}
			if warned != tc.warning {
				t.Fatalf("a warning event: %v; want %v", warned, tc.warning)
			}
			// The entries that fell back at the quota are asked to try again when there is room, and only they.
			for name, want := range map[string]bool{"shoot--p--a": tc.askAgain, "shoot--p--b": tc.askAgain, "shoot--p--c": false, "shoot--p--d": false} {
				be := &extensionsv1alpha1.BackupEntry{}
				if err := f.client.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
					t.Fatal(err)
				}
				if asked := be.Annotations[v1beta1constants.GardenerOperation] == v1beta1constants.GardenerOperationReconcile; asked != want {
					t.Fatalf("entry %s asked for a reconcile: %v; want %v", name, asked, want)
				}
			}
			// The same figure again: no second event.
			f.headroomCondition()
			if ev := f.events(); len(ev) != 0 {
				t.Fatalf("an unchanged headroom emitted %v", ev)
			}
			// Switched off: the condition and the series go.
			f.withEntryCredentials(false, &headroomIssuer{headroom: tc.headroom, err: tc.err})
			if c := f.headroomCondition(); c != nil {
				t.Fatalf("switched off, the condition stays: %+v", c)
			}
			if left, limit := series(); left != -1 || limit != -1 || unreadableSeries() != -1 {
				t.Fatalf("switched off, the series stay: %v, %v, unreadable %v", left, limit, unreadableSeries())
			}
		})
	}
}

func TestRequestEntriesAtQuotaAsksNoMoreThanThereIsRoomFor(t *testing.T) {
	ctx := context.Background()
	f := newProbeFixture(t, gardencorev1beta1.LastOperationStateSucceeded)
	for i := range 5 {
		be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("shoot--p--%d", i)}, Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: "probed"}}
		be.Status.Conditions = []gardencorev1beta1.Condition{{Type: entryinfo.ConditionEntryCredentials, Status: gardencorev1beta1.ConditionFalse, Reason: entryinfo.ReasonBucketWideAtQuota}}
		if i == 0 {
			be.Annotations = map[string]string{v1beta1constants.GardenerOperation: v1beta1constants.GardenerOperationReconcile} // asked before
		}
		if err := f.client.Create(ctx, be); err != nil {
			t.Fatal(err)
		}
	}
	asked, err := entryinfo.RequestEntriesAtQuota(ctx, f.client, f.client, "probed", 3)
	if err != nil || asked != 3 {
		t.Fatalf("asked %d, %v; want 3", asked, err)
	}
	list := &extensionsv1alpha1.BackupEntryList{}
	if err := f.client.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	annotated := 0
	for _, be := range list.Items {
		if be.Annotations[v1beta1constants.GardenerOperation] != "" {
			annotated++
		}
	}
	if annotated != 3 {
		t.Fatalf("%d entries have the operation annotation; want 3 (the one asked before counts)", annotated)
	}
}
