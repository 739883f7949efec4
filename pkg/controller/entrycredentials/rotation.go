// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"
	"fmt"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
)

// AnnotationRotateCredentials on a BackupEntry requests a rotation of its own credential
// (entryCredentials), as the same annotation does for a BackupBucket's generated one. The
// entry's actuator removes it once the new credential is published and recorded, and the
// previous one's retirement is on record.
const AnnotationRotateCredentials = credentials.AnnotationRotate

// ReasonEntryCredentialRotated is the event of a rotation of the entry's credential.
const ReasonEntryCredentialRotated = "EntryCredentialRotated"

// entryRotation is a rotation a pass decided or took up (Rotation).
type entryRotation = Rotation

// pendingRetirement is a rotated-out credential and until when it stays valid.
type pendingRetirement = entryrecord.Retiring

// rotationSchedule says, for the condition, when the published credential was issued and when
// it is rotated next.
func rotationSchedule(settings *credentials.EntrySettings, published *entryRecord) string {
	issued := published.IssuedAt
	if issued.IsZero() {
		return ""
	}
	next := fmt.Sprintf("rotated on request only (annotation %s; entryCredentials.rotation.period is not set)", AnnotationRotateCredentials)
	if p := settings.RotationPeriod(); p > 0 {
		next = "next rotation due " + issued.Add(p).UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("; issued %s, %s", issued.UTC().Format(time.RFC3339), next)
}

// settleRotation finishes a pass that published a rotated credential (o.rotation) or found a
// rotated-out one not yet retired (o.retire): both already on the etcd-backup secret's record.
// It removes the honoured request, retires the previous credential for the grace period (0s:
// revokes it at once), drops it from the record and says so.
func (c *Credentials) settleRotation(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, o *Outcome) error {
	if o.rotation != nil && o.rotation.Request != "" {
		if err := c.removeRotationRequest(ctx, be, o.rotation.Request); err != nil {
			return err
		}
	}
	r := o.retire
	if r == nil {
		return nil
	}
	if err := c.retireEntryCredential(ctx, be, r, o.published); err != nil {
		return fmt.Errorf("retiring the entry's rotated-out credential %s (kept on record, retried): %w", r.ID, err)
	}
	if err := c.updateRecord(ctx, be, func(r *entryrecord.Record) { r.Retiring = nil }); err != nil {
		return err
	}
	until := "now (gracePeriod 0s): revoked"
	if r.Until.After(time.Now()) {
		until = "until " + r.Until.UTC().Format(time.RFC3339) + " (rotation.gracePeriod), then it ends"
	}
	log.Info("Retired the entry's rotated-out credential", "previous", r.ID, "until", r.Until)
	if o.rotation != nil && o.published != nil {
		c.recorder.Eventf(be, nil, corev1.EventTypeNormal, ReasonEntryCredentialRotated, "Reconcile",
			"Rotated the entry's credential (%s): etcd-backup holds %s of issuer %s; the previous one %s stays valid %s",
			o.rotation.Reason, o.published.ID, o.published.Issuer, r.ID, until)
	}
	return nil
}

// retireEntryCredential lets r stay valid until r.Until, with the issuer that issued it and
// only where it was issued; a time not ahead revokes every credential of r's access but the
// published one at once.
func (c *Credentials) retireEntryCredential(ctx context.Context, be *extensionsv1alpha1.BackupEntry, r *pendingRetirement, published *entryRecord) error {
	if !r.Until.After(time.Now()) {
		return c.revokeEntryCredentials(ctx, be, r.Credential, published)
	}
	issuer, prefix, err := c.issuerWhereIssued(ctx, be, r.Credential)
	if err != nil {
		return err
	}
	return issuer.RetireEntryCredentials(ctx, be.Spec.BucketName, prefix, r.Access, []string{r.ID}, r.Until)
}

// removeRotationRequest removes AnnotationRotateCredentials from the entry if it still asks for
// what was honoured (a new value set meanwhile is another request, kept for the next pass).
func (c *Credentials) removeRotationRequest(ctx context.Context, be *extensionsv1alpha1.BackupEntry, honoured string) error {
	current := &extensionsv1alpha1.BackupEntry{}
	if err := c.client.Get(ctx, client.ObjectKeyFromObject(be), current); err != nil {
		return fmt.Errorf("reading the entry to remove its rotation request: %w", err)
	}
	if current.Annotations[AnnotationRotateCredentials] != honoured {
		return nil
	}
	base := current.DeepCopy()
	delete(current.Annotations, AnnotationRotateCredentials)
	if err := c.client.Patch(ctx, current, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("removing the honoured rotation request %s from the entry: %w", AnnotationRotateCredentials, err)
	}
	return nil
}
