// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"fmt"
	"math"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// ConditionEntryCredentialsHeadroom on a BackupBucket whose configuration has entryCredentials
// says how many more principals its entry issuer can create before the store's quota refuses
// them (objectstore.EntryCredentialIssuer.Headroom), read on the probe's interval:
// True/Sufficient, True/Unbounded (the store documents no limit), False/Low (under
// HeadroomLowPercent of the quota left), False/Exhausted (none left: new entries fail with
// ERR_INFRA_QUOTA_EXCEEDED, or get the bucket's credential with allowBucketCredentialAtQuota),
// Unknown/Unreadable. Absent while entryCredentials is off.
const ConditionEntryCredentialsHeadroom gardencorev1beta1.ConditionType = "EntryCredentialsHeadroom"

// Reasons of ConditionEntryCredentialsHeadroom; the two False ones are also its events' reasons
// (a Warning when the condition turns to them).
const (
	ReasonHeadroomSufficient = "Sufficient"
	ReasonHeadroomUnbounded  = "Unbounded"
	ReasonHeadroomLow        = "Low"
	ReasonHeadroomExhausted  = "Exhausted"
	ReasonHeadroomUnreadable = "Unreadable"
	ReasonHeadroomChanged    = "EntryCredentialsHeadroom"
)

// HeadroomLowPercent is the share of the quota left under which the condition turns False/Low:
// early enough to free principals or move a seed's backups before entries fail (AWS: 500 of
// 5,000 IAM users).
const HeadroomLowPercent = 10

// headroomVerdict is the condition's status, reason and message for h, read with issuer name.
func headroomVerdict(h objectstore.Headroom, issuer string) (gardencorev1beta1.ConditionStatus, string, string) {
	if h.Unbounded {
		return gardencorev1beta1.ConditionTrue, ReasonHeadroomUnbounded, fmt.Sprintf("Entry issuer %s: the store documents no limit of %s; every entry can get its own credential.", issuer, h.Principals)
	}
	figure := fmt.Sprintf("Entry issuer %s: %d of %d %s used, %d left. The figure is the whole place's, not this bucket's: every bucket whose operator's credentials are in it, and everything else there, counts against it.",
		issuer, h.Used, h.Limit, h.Principals, h.Left())
	what := "delete unused principals there, give this seed's backups an account of their own, or switch entryCredentials off for a seed"
	switch left := h.Left(); {
	case left == 0:
		return gardencorev1beta1.ConditionFalse, ReasonHeadroomExhausted, figure + " New entries' own credentials fail with ERR_INFRA_QUOTA_EXCEEDED (with allowBucketCredentialAtQuota: they get the bucket's credential, which reaches every entry's objects); " + what + "."
	case left*100 < h.Limit*HeadroomLowPercent:
		return gardencorev1beta1.ConditionFalse, ReasonHeadroomLow, figure + fmt.Sprintf(" Under %d%% of the quota is left: %s before new entries fail.", HeadroomLowPercent, what)
	}
	return gardencorev1beta1.ConditionTrue, ReasonHeadroomSufficient, figure
}

// publishHeadroom reads the headroom of bb's entry issuer and publishes it (condition, metrics);
// with room left it asks the bucket's entries that fell back to its credential at the quota to
// try again (entryinfo.RequestEntriesAtQuota). With entryCredentials off (or a config that does
// not decode: the reconcile reports that) it withdraws what an earlier look published.
func (p *prober) publishHeadroom(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, now time.Time) error {
	cfg, err := connect.BucketConfig(p.Provider, bb)
	var settings *credentials.EntrySettings
	if policy, ok := cfg.ProviderConfig.(credentials.EntryPolicy); ok && err == nil {
		settings = policy.EntryCredentialSettings()
	}
	if settings == nil {
		return p.withdrawHeadroom(ctx, bb)
	}
	// A figure that cannot be read is said by the condition (Unreadable), not returned: the
	// probe's requeue reads it again on its interval.
	issuer, readErr := connect.NewEntryIssuer(ctx, p.Reader, bb.Spec.SecretRef, bb.Spec.Region, cfg, settings.Issuer)
	if readErr == nil && issuer == nil {
		return p.withdrawHeadroom(ctx, bb) // the provider issues none: its entries say so themselves
	}
	var h objectstore.Headroom
	if readErr == nil {
		h, readErr = issuer.Headroom(objectstore.WithOperation(ctx, objectstore.OpCredentialHeadroom))
	}
	status, reason, message := headroomVerdict(h, settings.Issuer)
	metrics.ForgetHeadroom(bb.Name)
	switch {
	case readErr != nil:
		status, reason = gardencorev1beta1.ConditionUnknown, ReasonHeadroomUnreadable
		message = fmt.Sprintf("Entry issuer %s: the headroom could not be read (the operator's credentials need to read it, e.g. iam:GetAccountSummary): %v", settings.Issuer, readErr)
		metrics.EntryCredentialsHeadroomUnreadable.WithLabelValues(bb.Name, settings.Issuer).Set(1)
	case !h.Unbounded:
		metrics.EntryCredentialsHeadroom.WithLabelValues(bb.Name, settings.Issuer).Set(float64(h.Left()))
		metrics.EntryCredentialsLimit.WithLabelValues(bb.Name, settings.Issuer).Set(float64(h.Limit))
	}
	var previous *gardencorev1beta1.Condition
	if err := extstatus.Patch(ctx, p.Client, p.Reader, bb, func(bb *extensionsv1alpha1.BackupBucket) bool {
		if c := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionEntryCredentialsHeadroom); c != nil && c.Status == status && c.Reason == reason && c.Message == message {
			previous = c
			return false
		}
		bb.Status.Conditions, previous = extstatus.SetCondition(bb.Status.Conditions, ConditionEntryCredentialsHeadroom, status, reason, message, now)
		return true
	}); err != nil {
		return fmt.Errorf("setting the %s condition of BackupBucket %s: %w", ConditionEntryCredentialsHeadroom, bb.Name, err)
	}
	if status == gardencorev1beta1.ConditionFalse && (previous == nil || previous.Reason != reason) {
		p.Recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonHeadroomChanged, "Headroom", "%s", extstatus.EventNote(message))
	}
	if status == gardencorev1beta1.ConditionUnknown || (!h.Unbounded && h.Left() == 0) {
		return nil // no room known: nobody is asked to try again
	}
	room := math.MaxInt
	if !h.Unbounded {
		room = h.Left()
	}
	// Listed from the cache: this runs on every bucket's interval.
	if _, err := entryinfo.RequestEntriesAtQuota(ctx, p.Client, p.Client, bb.Name, room); err != nil {
		return fmt.Errorf("BackupBucket %s has room for entry credentials again: %w", bb.Name, err)
	}
	return nil
}

// withdrawHeadroom removes the condition and the series of a bucket whose entry credentials are
// off (or whose probe is, or which is being deleted): nothing would refresh them.
func (p *prober) withdrawHeadroom(ctx context.Context, bb *extensionsv1alpha1.BackupBucket) error {
	metrics.ForgetHeadroom(bb.Name)
	err := extstatus.Patch(ctx, p.Client, p.Reader, bb, func(bb *extensionsv1alpha1.BackupBucket) bool {
		if v1beta1helper.GetCondition(bb.Status.Conditions, ConditionEntryCredentialsHeadroom) == nil {
			return false
		}
		bb.Status.Conditions = v1beta1helper.RemoveConditions(bb.Status.Conditions, ConditionEntryCredentialsHeadroom)
		return true
	})
	if err = client.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("withdrawing the %s condition of BackupBucket %s: %w", ConditionEntryCredentialsHeadroom, bb.Name, err)
	}
	return nil
}
