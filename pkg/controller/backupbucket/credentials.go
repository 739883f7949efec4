// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener/gardener/extensions/pkg/controller/backupbucket"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// AnnotationRotateCredentials on a BackupBucket requests a rotation of its generated credential:
// each new value (any token, for example a date) is honoured once.
const AnnotationRotateCredentials = "backup.extensions.gardener.cloud/rotate-credentials"

// What the generated secret records about the credentials it stands for (IDs, never values):
// AnnotationCredential is the published credential's ID, AnnotationIssuer the issuer that issued
// it (the previous credential's issuer is recorded too); AnnotationRetireAfter, once generation
// is switched off, when the generated credentials are revoked.
const (
	AnnotationCredential       = "backup.extensions.gardener.cloud/credential"
	AnnotationIssuer           = "backup.extensions.gardener.cloud/issuer"
	annotationPreviousIssuer   = "backup.extensions.gardener.cloud/previous-issuer"
	annotationIssuedAt         = "backup.extensions.gardener.cloud/issued-at"
	annotationPrevious         = "backup.extensions.gardener.cloud/previous-credential"
	annotationRevokePrevious   = "backup.extensions.gardener.cloud/revoke-previous-after"
	annotationRotationHonoured = "backup.extensions.gardener.cloud/rotation-request"
	AnnotationRetireAfter      = "backup.extensions.gardener.cloud/retire-after"
	// AnnotationOperatorCopy says that the generated secret holds a copy of the operator's
	// credentials: generation was switched off. gardenlet (v1.150) never clears the core
	// BackupBucket's status.generatedSecretRef once set and keeps handing the secret it names to
	// every entry, so the reference stays and what the secret holds changes instead.
	AnnotationOperatorCopy = "backup.extensions.gardener.cloud/operator-credentials"
)

// Event reasons of generated credentials (the note names IDs, never values).
const (
	ReasonCredentialPublished = "GeneratedCredentialPublished"
	ReasonCredentialRevoked   = "GeneratedCredentialRevoked"
	ReasonRotationWaiting     = "GeneratedCredentialRotationWaiting"
	ReasonPassThrough         = "GeneratedCredentialsPassThrough"
	ReasonRetiring            = "GeneratedCredentialsRetiring"
	ReasonNotRevoked          = "GeneratedCredentialsNotRevoked"
)

// ConditionGeneratedCredentials on a BackupBucket's status says whether shoots get generated
// credentials (True) or the operator's (False, with the reason: PassThrough, Retiring, Retired).
// Buckets that never had generated credentials have no such condition.
const ConditionGeneratedCredentials gardencorev1beta1.ConditionType = "GeneratedCredentials"

// issuedBy names the issuer of the generated secret's current credential: the one recorded, or
// for a secret written before issuers were recorded the configured one (g may be nil), or the
// empty name (the provider's issuer for its credentials).
func issuedBy(secret *corev1.Secret, g *credentials.Settings) string {
	if name, ok := secret.Annotations[AnnotationIssuer]; ok {
		return name
	}
	if g != nil {
		return g.Issuer
	}
	return ""
}

// previousIssuedBy names the issuer of the generated secret's previous credential.
func previousIssuedBy(secret *corev1.Secret, g *credentials.Settings) string {
	if name, ok := secret.Annotations[annotationPreviousIssuer]; ok {
		return name
	}
	return issuedBy(secret, g)
}

// newIssuer builds the provider's issuer named name with the operator's credentials (nil: these
// credentials issue none).
func (a *actuator) newIssuer(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, name string) (objectstore.CredentialIssuer, error) {
	return connect.NewIssuer(ctx, a.reader, bb.Spec.SecretRef, bb.Spec.Region, cfg, name)
}

// publishCredential keeps the bucket's generated secret and status.generatedSecretRef current:
// it issues the first credential, rotates it by period, on request or when the configured issuer
// changes (the new one is published before the previous is revoked, after its grace period, by
// the issuer that issued it) and revokes what has outlived its grace.
func (a *actuator) publishCredential(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, g *credentials.Settings, issuer objectstore.CredentialIssuer) error {
	period, grace := g.RotationPeriod(), g.Grace()
	secret, exists, err := readGenerated(ctx, a.reader, bb)
	if err != nil {
		return err
	}
	meta := backupbucket.GeneratedSecretObjectMeta(bb)
	now := time.Now().UTC()
	var held []string // credentials of the bucket that the operator's copy holds: theirs
	if exists && hasAnnotation(secret, AnnotationOperatorCopy) {
		// Generation is switched on again after it was switched off: the secret holds the
		// operator's credentials, which the entries move to.
		if credentialIDs(secret) == "" {
			// Retired: nothing generated is left; a new credential is issued, never one that
			// invalidates what the copy holds.
			if held, err = heldIn(ctx, issuer, bb.Name, secret.Data); err != nil {
				return err
			}
			for _, key := range recordKeys {
				delete(secret.Annotations, key)
			}
		} else if waiting, err := a.resume(ctx, log, bb, cfg, g, issuer, secret, now); err != nil || waiting {
			return err
		}
	}
	unrecorded := secret.Annotations[AnnotationCredential] != "" && !hasAnnotation(secret, AnnotationIssuer)
	// A credential issued before locations were recorded is taken as issued where the configured
	// issuer reaches now (documented in docs/generated-credentials.md).
	adopt := secret.Annotations[AnnotationCredential] != "" && !hasAnnotation(secret, AnnotationIssuedIn) && issuedBy(secret, g) == g.Issuer
	if exists && (secret.Annotations[AnnotationRetireAfter] != "" || unrecorded || adopt) {
		// Generation was switched off and on again before the credential was revoked, by a
		// version that still held the credential under the reference: keep it. A secret written
		// before issuers were recorded records the configured one from now on.
		patch := client.MergeFrom(secret.DeepCopy())
		delete(secret.Annotations, AnnotationRetireAfter)
		if unrecorded {
			secret.Annotations[AnnotationIssuer] = g.Issuer
		}
		if adopt {
			location, err := issuer.Location(objectstore.WithOperation(ctx, objectstore.OpCredentialLocation))
			if err != nil {
				return fmt.Errorf("finding where issuer %q issues: %w", g.Issuer, err)
			}
			secret.Annotations[AnnotationIssuedIn] = location
		}
		if err := a.client.Patch(ctx, secret, patch); err != nil {
			return fmt.Errorf("resuming generated secret %s/%s: %w", meta.Namespace, meta.Name, err)
		}
	}
	current, currentIssuer := secret.Annotations[AnnotationCredential], issuedBy(secret, g)
	previous, err := a.revokeDue(ctx, log, bb, cfg, g, issuer, secret, now)
	if err != nil {
		return err
	}

	requested := bb.Annotations[AnnotationRotateCredentials]
	reason := ""
	switch {
	case !exists || current == "" || len(secret.Data) == 0:
		reason = "initial"
	case currentIssuer != g.Issuer:
		reason = fmt.Sprintf("issuer %q replaces %q", g.Issuer, currentIssuer)
	case requested != "" && requested != secret.Annotations[annotationRotationHonoured]:
		reason = "requested"
	case period > 0 && now.Sub(parseTime(secret.Annotations[annotationIssuedAt])) >= period:
		reason = "period"
	}
	if reason != "" && reason != "initial" && previous != "" {
		// Both credentials are in use: the next rotation waits for the previous one's revocation.
		log.Info("Rotation waits until the previous credential is revoked", "reason", reason, "revokeAfter", secret.Annotations[annotationRevokePrevious])
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonRotationWaiting, "Rotate",
			"A rotation (%s) waits: the previous credential %q stays valid until %s, then it is revoked and the rotation follows", reason, previous, secret.Annotations[annotationRevokePrevious])
		reason = ""
	}
	if reason != "" {
		inUse := []string{}
		if exists && current != "" && currentIssuer == g.Issuer {
			inUse = append(inUse, current) // another issuer's credential is not this issuer's to keep
		}
		inUse = append(inUse, held...)
		cred, err := issuer.IssueCredential(objectstore.WithOperation(ctx, objectstore.OpIssueCredential), bb.Name, inUse)
		if err != nil && reason == "initial" && errors.Is(err, objectstore.ErrUnsupported) {
			return a.passThrough(ctx, log, bb, g, err)
		}
		if err != nil {
			return fmt.Errorf("issuing a credential for bucket %q: %w", bb.Name, err)
		}
		annotations, err := issuedAnnotations(ctx, issuer, g, cred, now)
		if err != nil {
			return err // not recorded: the next pass issues again, which invalidates it
		}
		if requested != "" {
			annotations[annotationRotationHonoured] = requested
		}
		if exists && current != "" {
			recordPrevious(annotations, secret, currentIssuer, now.Add(grace))
		}
		if err := a.writeGenerated(ctx, secret, exists, cred.Data, annotations); err != nil {
			// The new credential is not recorded: the next pass issues again, which invalidates it.
			return err
		}
		log.Info("Published a generated credential", "reason", reason, "credential", cred.ID, "secret", meta.Namespace+"/"+meta.Name)
		a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialPublished, "Publish",
			"Published generated credential %q in %s/%s (%s)", cred.ID, meta.Namespace, meta.Name, reason)
		// Without a grace period the previous credential is due at once (secret is as written).
		if _, err := a.revokeDue(ctx, log, bb, cfg, g, issuer, secret, time.Now().UTC()); err != nil {
			return err
		}
	}

	ref := &corev1.SecretReference{Namespace: meta.Namespace, Name: meta.Name}
	return a.patchStatus(ctx, bb, ref, gardencorev1beta1.ConditionTrue, "Published",
		fmt.Sprintf("Shoots use generated credential %q of secret %s/%s: %s", secret.Annotations[AnnotationCredential], meta.Namespace, meta.Name, issuer.CredentialReach(bb.Name)))
}

// issuedAnnotations records the credential cred that issuer (the configured one) issued now:
// its ID, its issuer, when, and where it lives.
func issuedAnnotations(ctx context.Context, issuer objectstore.CredentialIssuer, g *credentials.Settings, cred objectstore.Credential, now time.Time) (map[string]string, error) {
	location, err := issuer.Location(objectstore.WithOperation(ctx, objectstore.OpCredentialLocation))
	if err != nil {
		return nil, fmt.Errorf("finding where issuer %q issued credential %q: %w", g.Issuer, cred.ID, err)
	}
	return map[string]string{
		AnnotationCredential: cred.ID,
		AnnotationIssuer:     g.Issuer,
		annotationIssuedAt:   now.Format(time.RFC3339),
		AnnotationIssuedIn:   location,
	}, nil
}

// recordPrevious records the generated secret's current credential (of issuer) as the previous
// one in annotations, to be revoked after revokeAfter.
func recordPrevious(annotations map[string]string, secret *corev1.Secret, issuer string, revokeAfter time.Time) {
	annotations[annotationPrevious] = secret.Annotations[AnnotationCredential]
	annotations[annotationPreviousIssuer] = issuer
	annotations[annotationRevokePrevious] = revokeAfter.UTC().Format(time.RFC3339)
	if location := secret.Annotations[AnnotationIssuedIn]; location != "" {
		annotations[annotationPreviousIssuedIn] = location
	}
}

// passThrough leaves shoots on the operator's credentials when the store cannot issue generated
// ones and the providerConfig allows it, and says so; otherwise that is an error.
func (a *actuator) passThrough(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, g *credentials.Settings, cause error) error {
	if !g.AllowPassThrough {
		return fmt.Errorf("issuing a credential for bucket %q: %w (generatedCredentials.allowPassThrough: true keeps shoots on the operator's credentials instead)", bb.Name, cause)
	}
	msg := fmt.Sprintf("Shoots keep the operator's credentials (generatedCredentials.allowPassThrough): the store cannot issue generated credentials: %v", cause)
	log.Info("Generated credentials are not possible; passing the operator's through, as allowed", "cause", cause.Error())
	a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonPassThrough, "Publish", "%s", msg)
	return a.patchStatus(ctx, bb, nil, gardencorev1beta1.ConditionFalse, "PassThrough", msg)
}

// patchStatus sets status.generatedSecretRef and the GeneratedCredentials condition, writing
// only what changed and never another writer's conditions (BucketAvailable).
func (a *actuator) patchStatus(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, ref *corev1.SecretReference, status gardencorev1beta1.ConditionStatus, reason, message string) error {
	err := extstatus.Patch(ctx, a.client, a.reader, bb, func(bb *extensionsv1alpha1.BackupBucket) bool {
		old := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionGeneratedCredentials)
		sameRef := (ref == nil && bb.Status.GeneratedSecretRef == nil) || (ref != nil && bb.Status.GeneratedSecretRef != nil && *ref == *bb.Status.GeneratedSecretRef)
		if sameRef && old != nil && old.Status == status && old.Reason == reason && old.Message == message {
			return false
		}
		bb.Status.GeneratedSecretRef = ref
		bb.Status.Conditions, _ = extstatus.SetCondition(bb.Status.Conditions, ConditionGeneratedCredentials, status, reason, message, time.Now())
		return true
	})
	if err != nil {
		return fmt.Errorf("setting status.generatedSecretRef and the %s condition: %w", ConditionGeneratedCredentials, err)
	}
	return nil
}

// writeGenerated creates (exists false) or replaces the generated secret's data and sets the
// annotations given (other annotations, the previous credential's among them, are replaced as a
// whole). secret is the one read at the start of the pass, and holds what was written after.
func (a *actuator) writeGenerated(ctx context.Context, secret *corev1.Secret, exists bool, data map[string][]byte, annotations map[string]string) error {
	if !exists {
		secret.Type, secret.Annotations, secret.Data = corev1.SecretTypeOpaque, annotations, data
		if err := a.client.Create(ctx, secret); err != nil {
			return fmt.Errorf("creating generated secret %s/%s: %w", secret.Namespace, secret.Name, err)
		}
		return nil
	}
	for _, key := range previousKeys {
		delete(secret.Annotations, key)
	}
	delete(secret.Annotations, AnnotationOperatorCopy)
	delete(secret.Annotations, AnnotationRetireAfter)
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	maps.Copy(secret.Annotations, annotations)
	secret.Data = data
	if err := a.client.Update(ctx, secret); err != nil {
		return fmt.Errorf("updating generated secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return nil
}

// readGenerated reads the bucket's generated secret from the API server. A missing one comes
// back with its name and namespace set and exists false.
func readGenerated(ctx context.Context, reader client.Reader, bb *extensionsv1alpha1.BackupBucket) (secret *corev1.Secret, exists bool, err error) {
	meta := backupbucket.GeneratedSecretObjectMeta(bb)
	secret = &corev1.Secret{}
	err = reader.Get(ctx, client.ObjectKey{Namespace: meta.Namespace, Name: meta.Name}, secret)
	if apierrors.IsNotFound(err) {
		secret.Namespace, secret.Name = meta.Namespace, meta.Name
		return secret, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading generated secret %s/%s: %w", meta.Namespace, meta.Name, err)
	}
	return secret, true, nil
}

// credentialIDs names the credentials the generated secret records (IDs, never values).
func credentialIDs(secret *corev1.Secret) string {
	return strings.Trim(secret.Annotations[AnnotationCredential]+","+secret.Annotations[annotationPrevious], ",")
}

func hasAnnotation(o metav1.Object, key string) bool {
	_, ok := o.GetAnnotations()[key]
	return ok
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s) // unparsable: the zero time, that is "long ago"
	return t
}
