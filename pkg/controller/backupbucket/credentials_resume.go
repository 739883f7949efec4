// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// reasonResuming is the GeneratedCredentials condition's reason while generation, switched on
// again during a retirement, waits for a credential to be issued.
const reasonResuming = "Resuming"

// resume switches generation on again during a retirement's grace period: the generated secret
// holds a copy of the operator's credentials, and shoots may still use the generated credential
// recorded on it (until their entries are synced) or the copy. Nothing in use is revoked: a new
// credential is issued and published, and the one recorded becomes the previous credential,
// valid until the retirement's time (the grace it was promised) and at least a grace period
// from now (for shoots on the copy), then revoked where it was issued. A credential of the
// bucket that the copy holds (objectstore.CredentialIssuer.HeldIn: an Azure account key) is kept valid
// and never revoked. Where two credentials are recorded (a rotation's previous one still in its grace), the
// new one waits for the older one's revocation, as a rotation does: until then the copy of the
// operator's credentials stays published. waiting is true then.
func (a *actuator) resume(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, g *credentials.Settings, issuer objectstore.CredentialIssuer, secret *corev1.Secret, now time.Time) (waiting bool, err error) {
	ref := &corev1.SecretReference{Namespace: secret.Namespace, Name: secret.Name}
	previous, err := a.revokeDue(ctx, log, bb, cfg, g, issuer, secret, now)
	if err != nil {
		return false, err
	}
	if previous != "" {
		due := secret.Annotations[annotationRevokePrevious]
		msg := fmt.Sprintf("Generation is switched on again: a new credential is published once the previous credential %q is revoked after %s; until then shoots keep the operator's credentials, which secret %s/%s holds", previous, due, secret.Namespace, secret.Name)
		log.Info("Generation is switched on again; the new credential waits for the previous one's revocation", "previous", previous, "revokeAfter", due)
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonRotationWaiting, "Rotate", "%s", msg)
		return true, a.patchStatus(ctx, bb, ref, gardencorev1beta1.ConditionFalse, reasonResuming, msg)
	}
	current, currentIssuer := secret.Annotations[AnnotationCredential], issuedBy(secret, g)
	held, err := heldIn(ctx, issuer, bb.Name, secret.Data)
	if err != nil {
		return false, err
	}
	var inUse []string
	if currentIssuer == g.Issuer {
		inUse = append(inUse, current) // another issuer's credential is not this issuer's to keep
	}
	if len(held) > 0 && !slices.Contains(held, current) {
		// The copy published holds another of the bucket's credentials (Azure: the other account
		// key): a new one would invalidate it or the recorded one. The recorded one is revoked
		// at the retirement's time, as promised, never the copy's; then the new one is issued.
		if due := secret.Annotations[AnnotationRetireAfter]; now.Before(parseTime(due)) {
			msg := fmt.Sprintf("Generation is switched on again: the operator's credentials that secret %s/%s holds are credential %q of the bucket, which stays valid; a new credential is published once generated credential %q is revoked after %s", secret.Namespace, secret.Name, strings.Join(held, ","), current, due)
			log.Info("Generation is switched on again; the new credential waits for the retirement's revocation", "held", held, "recorded", current, "revokeAfter", due)
			a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonRotationWaiting, "Rotate", "%s", msg)
			return true, a.patchStatus(ctx, bb, ref, gardencorev1beta1.ConditionFalse, reasonResuming, msg)
		}
		if err := a.checkLocation(ctx, log, bb, secret, issuer, current, secret.Annotations[AnnotationIssuedIn]); err != nil {
			return false, err
		}
		if err := issuer.RevokeCredentials(objectstore.WithOperation(ctx, objectstore.OpRevokeCredentials), bb.Name, held); err != nil {
			return false, fmt.Errorf("revoking the generated credential %q of bucket %q: %w", current, bb.Name, err)
		}
		log.Info("Revoked the retired generated credential", "credential", current)
		a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialRevoked, "Revoke", "Revoked the generated credential %q", current)
		current, inUse = "", nil
	}
	inUse = append(inUse, held...)
	cred, err := issuer.IssueCredential(objectstore.WithOperation(ctx, objectstore.OpIssueCredential), bb.Name, inUse)
	if err != nil {
		return false, fmt.Errorf("issuing a credential for bucket %q: %w", bb.Name, err)
	}
	annotations, err := issuedAnnotations(ctx, issuer, g, cred, now)
	if err != nil {
		return false, err
	}
	if requested := bb.Annotations[AnnotationRotateCredentials]; requested != "" {
		annotations[annotationRotationHonoured] = requested
	}
	if current != "" && !slices.Contains(held, current) {
		// The recorded credential keeps the validity the retirement promised it, and the copy
		// shoots may use until their entries are synced stays valid a grace period longer.
		revokeAfter := parseTime(secret.Annotations[AnnotationRetireAfter])
		if graceEnd := now.Add(g.Grace()); revokeAfter.Before(graceEnd) {
			revokeAfter = graceEnd
		}
		recordPrevious(annotations, secret, currentIssuer, revokeAfter)
	}
	// A credential the copy holds is the operator's too: it is not recorded, and never revoked
	// by this extension.
	if err := a.writeGenerated(ctx, secret, true, cred.Data, annotations); err != nil {
		return false, err
	}
	log.Info("Published a generated credential", "reason", "generation switched on again", "credential", cred.ID, "previous", annotations[annotationPrevious], "revokeAfter", annotations[annotationRevokePrevious])
	a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialPublished, "Publish",
		"Published generated credential %q in %s/%s (generation switched on again)", cred.ID, secret.Namespace, secret.Name)
	return false, nil
}

// heldIn lists the bucket's credentials that data holds.
func heldIn(ctx context.Context, issuer objectstore.CredentialIssuer, bucket string, data map[string][]byte) ([]string, error) {
	held, err := issuer.HeldIn(objectstore.WithOperation(ctx, objectstore.OpCredentialHeldIn), bucket, data)
	if err != nil {
		return nil, fmt.Errorf("finding which of bucket %q's credentials the operator's copy holds: %w", bucket, err)
	}
	return held, nil
}
