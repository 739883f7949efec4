// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
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

// AnnotationRotateCredentials on a BackupBucket requests a rotation of its generated credential.
const AnnotationRotateCredentials = credentials.AnnotationRotate

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

// newIssuer builds the provider's issuer named name with the operator's credentials (nil: these
// credentials issue none).
func (a *actuator) newIssuer(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, name string) (objectstore.CredentialIssuer, error) {
	return connect.NewIssuer(ctx, a.reader, bb.Spec.SecretRef, bb.Spec.Region, cfg, name)
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

func hasAnnotation(o metav1.Object, key string) bool {
	_, ok := o.GetAnnotations()[key]
	return ok
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s) // unparsable: the zero time, that is "long ago"
	return t
}

// recordedCredential is one credential the generated secret records.
type recordedCredential struct{ id, issuer, location string }

// recorded lists the credentials the generated secret records: the current one, then the
// previous one.
func recorded(secret *corev1.Secret) []recordedCredential {
	ann := secret.Annotations
	var out []recordedCredential
	if id := ann[AnnotationCredential]; id != "" {
		out = append(out, recordedCredential{id, ann[AnnotationIssuer], ann[AnnotationIssuedIn]})
	}
	if id := ann[annotationPrevious]; id != "" {
		out = append(out, recordedCredential{id, ann[annotationPreviousIssuer], ann[annotationPreviousIssuedIn]})
	}
	return out
}

// credentialIDs names the credentials the generated secret records (IDs, never values).
func credentialIDs(secret *corev1.Secret) string {
	return strings.Trim(secret.Annotations[AnnotationCredential]+","+secret.Annotations[annotationPrevious], ",")
}
