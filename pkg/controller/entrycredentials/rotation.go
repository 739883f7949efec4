// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"
	"fmt"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
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
