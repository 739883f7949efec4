// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Where each recorded credential lives (objectstore.CredentialIssuer.Location at its issue), and
// what the operator says they revoked by hand.
const (
	// AnnotationIssuedIn is the place where the published credential was issued.
	AnnotationIssuedIn         = "backup.extensions.gardener.cloud/issued-in"
	annotationPreviousIssuedIn = "backup.extensions.gardener.cloud/previous-issued-in"
	// AnnotationRevokedByHand on the generated secret lists the IDs (comma-separated) of recorded
	// credentials that the operator revoked by hand where they were issued, because the
	// operator's credentials no longer reach that place: their record is dropped without a
	// revocation (and without saying "Revoked").
	AnnotationRevokedByHand = "backup.extensions.gardener.cloud/revoked-by-hand"
)

// More event reasons and the condition reason of a credential that cannot be revoked.
const (
	// ReasonRecordDropped: the operator recorded the credential as revoked by hand.
	ReasonRecordDropped = "GeneratedCredentialRecordDropped"
	// reasonNotRevoked is the GeneratedCredentials condition's reason while a credential that is
	// due cannot be revoked.
	reasonNotRevoked = "NotRevoked"
	// ReasonRetirementRefused is the event reason, and reasonRetirementRefused the condition's,
	// of a switch-off refused because the operator's credentials are a workload identity.
	ReasonRetirementRefused = "GeneratedCredentialsRetirementRefused"
	reasonRetirementRefused = "RetirementRefused"
)

// revokedByHand says whether the operator recorded id as revoked by hand.
func revokedByHand(secret *corev1.Secret, id string) bool {
	return id != "" && slices.Contains(strings.Split(secret.Annotations[AnnotationRevokedByHand], ","), id)
}

// unreachable is a credential due for revocation that no issuer built from the operator's
// credentials can revoke: reported, and kept recorded, until the operator revokes it by hand and
// says so.
func (a *actuator) unreachable(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, secret *corev1.Secret, ids string, cause error) error {
	howTo := fmt.Sprintf("revoke %q by hand where it was issued, then record that: kubectl -n %s annotate secret %s %s=%s", ids, secret.Namespace, secret.Name, AnnotationRevokedByHand, ids)
	log.Info("A generated credential cannot be revoked", "credentials", ids, "cause", cause.Error())
	a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonNotRevoked, "Revoke",
		"Generated credential %q is NOT revoked and stays valid: %v; %s", ids, cause, howTo)
	ref := &corev1.SecretReference{Namespace: secret.Namespace, Name: secret.Name}
	if err := a.patchStatus(ctx, bb, ref, gardencorev1beta1.ConditionUnknown, reasonNotRevoked,
		fmt.Sprintf("Generated credential %q is due for revocation but is NOT revoked: %v; %s", ids, cause, howTo)); err != nil {
		return errors.Join(cause, err)
	}
	if !errors.Is(cause, objectstore.ErrInvalidConfig) {
		cause = objectstore.Invalidf("%w", cause)
	}
	return fmt.Errorf("generated credential %q of bucket %q is not revoked: %w; %s", ids, bb.Name, cause, howTo)
}

// checkLocation is objectstore.CheckLocation, reported as unreachable when it fails that way.
func (a *actuator) checkLocation(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, secret *corev1.Secret, issuer objectstore.CredentialIssuer, ids, recorded string) error {
	err := objectstore.CheckLocation(ctx, issuer, ids, recorded)
	if elsewhere := new(*objectstore.CredentialElsewhereError); errors.As(err, elsewhere) {
		return a.unreachable(ctx, log, bb, secret, ids, err)
	}
	return err
}
