// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// ConditionCopyBucketReady on a BackupBucket says whether the copy bucket its seed configuration
// declares (`copy:`) is converged: True when it is, False with the cause when not. It is absent
// when no copy is declared.
const ConditionCopyBucketReady gardencorev1beta1.ConditionType = "CopyBucketReady"

// Reasons of CopyBucketReady and events of the copy bucket.
const (
	ReasonCopyBucketReady    = "CopyBucketReady"
	ReasonCopyBucketFailed   = "CopyBucketFailed"
	ReasonCopyBucketKept     = "CopyBucketKept"
	ReasonCopyBucketDeleted  = "CopyBucketDeleted"
	ReasonCopyCredentialsErr = "CopyCredentialsMissing"
	// ReasonCopyBucketInvalid: the copy bucket is the primary itself (copy.bucketName), or
	// copy.type is a type this binary writes no copy of (provider.CopyStore).
	ReasonCopyBucketInvalid = "CopyBucketInvalid"
)

// reconcileCopy converges the copy bucket the config declares with the same provider's
// management plane (EnsureBucket with copy.providerConfig: hardening, immutability and this
// extension's mark, as the primary) and the copy's credentials, and says in CopyBucketReady
// whether it is ready. A copy that cannot be converged does not fail the primary's reconcile:
// shoots' backups go to the primary, which must stay Succeeded so that gardenlet keeps creating
// entries; the condition and a Warning event say what is wrong, and every entry's BackupsCopied
// says what it means for that entry. With no copy declared, the condition is removed and the copy
// bucket left as it is (the copy is the disaster copy: never deleted because a field went away).
func (a *actuator) reconcileCopy(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) error {
	place, err := connect.CopyPlaceOf(a.provider, cfg, bb.Name)
	if err != nil {
		// A copy.type this binary writes no copy of (provider.CopyStore): the primary stays usable.
		msg := fmt.Sprintf("The copy bucket is not converged: %v%s", err, codesNote(err))
		log.Info("Copy bucket is refused", "error", err.Error())
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonCopyBucketInvalid, "Copy", "%s", extstatus.EventNote(msg))
		return a.setCopyCondition(ctx, bb, &gardencorev1beta1.Condition{Status: gardencorev1beta1.ConditionFalse, Reason: ReasonCopyBucketInvalid, Message: msg})
	}
	if place == nil {
		return a.setCopyCondition(ctx, bb, nil)
	}
	if err := notThePrimary(place, bb); err != nil {
		msg := fmt.Sprintf("The copy bucket is not converged: %v%s", err, codesNote(err))
		log.Info("Copy bucket is refused", "bucket", place.Bucket, "error", err.Error())
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonCopyBucketInvalid, "Copy", "%s", extstatus.EventNote(msg))
		return a.setCopyCondition(ctx, bb, &gardencorev1beta1.Condition{Status: gardencorev1beta1.ConditionFalse, Reason: ReasonCopyBucketInvalid, Message: msg})
	}
	status, reason, msg := gardencorev1beta1.ConditionTrue, ReasonCopyBucketReady, fmt.Sprintf("The copy bucket %q%s is converged.", place.Bucket, inRegion(place.Region))
	if err := a.ensureCopyBucket(ctx, place); err != nil {
		status, reason, msg = gardencorev1beta1.ConditionFalse, ReasonCopyBucketFailed, fmt.Sprintf("The copy bucket %q%s is not converged: %v%s", place.Bucket, inRegion(place.Region), err, codesNote(err))
		if errors.Is(err, connect.ErrCopySecretMissing) {
			reason = ReasonCopyCredentialsErr
		}
		log.Info("Copy bucket is not converged", "bucket", place.Bucket, "error", err.Error())
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, reason, "Copy", "%s", extstatus.EventNote(msg))
	} else {
		log.Info("Copy bucket is converged", "bucket", place.Bucket, "region", place.Region)
	}
	return a.setCopyCondition(ctx, bb, &gardencorev1beta1.Condition{Status: status, Reason: reason, Message: msg})
}

// notThePrimary refuses a copy bucket that is the primary itself: a copy there is no second copy,
// and the copy's deletion would delete the primary.
func notThePrimary(place *connect.CopyPlace, bb *extensionsv1alpha1.BackupBucket) error {
	if !place.IsBucket(bb.Name) {
		return nil
	}
	return objectstore.Invalidf("copy.bucketName: Invalid value: %q: the copy bucket must not be the BackupBucket's own bucket", place.Bucket)
}

func (a *actuator) ensureCopyBucket(ctx context.Context, place *connect.CopyPlace) error {
	mgmt, err := place.NewManagement(ctx, a.reader)
	if err != nil {
		return err
	}
	return mgmt.EnsureBucket(objectstore.WithOperation(ctx, objectstore.OpEnsureBucket), objectstore.Bucket{Name: place.Bucket, Region: place.Region})
}

// setCopyCondition sets CopyBucketReady (nil: removes it), writing only what changed.
func (a *actuator) setCopyCondition(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, c *gardencorev1beta1.Condition) error {
	err := extstatus.Patch(ctx, a.client, a.reader, bb, func(bb *extensionsv1alpha1.BackupBucket) bool {
		old := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionCopyBucketReady)
		if c == nil {
			if old == nil {
				return false
			}
			bb.Status.Conditions = v1beta1helper.RemoveConditions(bb.Status.Conditions, ConditionCopyBucketReady)
			return true
		}
		if old != nil && old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			return false
		}
		bb.Status.Conditions, _ = extstatus.SetCondition(bb.Status.Conditions, ConditionCopyBucketReady, c.Status, c.Reason, c.Message, time.Now())
		return true
	})
	if err != nil {
		return fmt.Errorf("setting the %s condition: %w", ConditionCopyBucketReady, err)
	}
	return nil
}

// deleteCopy ends the copy bucket with its BackupBucket, safely: it is deleted only when it holds
// nothing (every entry's deletion emptied its prefix there, as in the primary; the store refuses
// to delete a bucket that is not empty, and nothing here empties it). A copy bucket that still
// holds objects (locked ones whose deletion was deferred, or objects of others) is kept and the
// operator told by a Warning event naming what is left: its owner from then on is the operator.
// Nothing about the copy stops the primary's deletion: the copy is there for when the primary is
// gone.
func (a *actuator) deleteCopy(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) {
	place, err := connect.CopyPlaceOf(a.provider, cfg, bb.Name)
	if err != nil || place == nil || notThePrimary(place, bb) != nil {
		return
	}
	keep := func(why string) {
		msg := fmt.Sprintf("The copy bucket %q%s is kept: %s. It is the operator's now: delete it when its objects are not needed.", place.Bucket, inRegion(place.Region), why)
		log.Info("Copy bucket is kept", "bucket", place.Bucket, "why", why)
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonCopyBucketKept, "Delete", "%s", extstatus.EventNote(msg))
	}
	data, err := place.NewDataPlane(ctx, a.reader, a.provider)
	if err != nil {
		keep(fmt.Sprintf("its credentials cannot be read (%v), so whether it is empty is unknown", err))
		return
	}
	mgmt, err := place.NewManagement(ctx, a.reader)
	if err != nil {
		keep(fmt.Sprintf("its credentials cannot be read (%v)", err))
		return
	}
	err = mgmt.DeleteBucket(objectstore.WithOperation(ctx, objectstore.OpDeleteBucket), place.Bucket)
	switch {
	case errors.Is(err, objectstore.ErrBucketNotEmpty):
		keep(notEmptied(ctx, data, place.Bucket, err).Error())
	case err != nil:
		keep(fmt.Sprintf("deleting it failed: %v", err))
	default:
		log.Info("Copy bucket is deleted: it was empty", "bucket", place.Bucket)
		a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCopyBucketDeleted, "Delete", "The copy bucket %q%s was empty and is deleted.", place.Bucket, inRegion(place.Region))
	}
}

func inRegion(region string) string {
	if region == "" {
		return ""
	}
	return fmt.Sprintf(" in region %q", region)
}

// codesNote names the Gardener error codes of err, where it has any, for a condition's message.
func codesNote(err error) string {
	codes := lasterror.Codes(err)
	if len(codes) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%v)", codes)
}
