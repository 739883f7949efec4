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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener/gardener/extensions/pkg/controller/backupbucket"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/generated"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/rotation"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// AnnotationRotateCredentials on a BackupBucket requests a rotation of its generated credential:
// each new value (any token, for example a date) is honoured once.
const AnnotationRotateCredentials = "backup.extensions.gardener.cloud/rotate-credentials"

// What the generated secret records about the credentials it stands for (IDs, never values):
// AnnotationCredential is the published credential's ID; AnnotationRetireAfter, once generation
// is switched off, when the generated credentials are revoked.
const (
	AnnotationCredential       = "backup.extensions.gardener.cloud/credential"
	annotationIssuedAt         = "backup.extensions.gardener.cloud/issued-at"
	annotationPrevious         = "backup.extensions.gardener.cloud/previous-credential"
	annotationRevokePrevious   = "backup.extensions.gardener.cloud/revoke-previous-after"
	annotationRotationHonoured = "backup.extensions.gardener.cloud/rotation-request"
	AnnotationRetireAfter      = "backup.extensions.gardener.cloud/retire-after"
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

func rotationOf(cfg any) (period, grace time.Duration) {
	g := generated.Of(cfg)
	if g == nil {
		return 0, rotation.DefaultGracePeriod
	}
	return g.Rotation.RotationPeriod(), g.Rotation.Grace()
}

// publishCredential keeps the bucket's generated secret and status.generatedSecretRef current:
// it issues the first credential, rotates it by period or on request (the new one is published
// before the previous is revoked, after its grace period) and revokes what has outlived its grace.
func (a *actuator) publishCredential(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, issuer objectstore.CredentialIssuer, cfg any) error {
	period, grace := rotationOf(cfg)
	secret, exists, err := readGenerated(ctx, a.reader, bb)
	if err != nil {
		return err
	}
	meta := backupbucket.GeneratedSecretObjectMeta(bb)
	now := time.Now().UTC()
	if exists && secret.Annotations[AnnotationRetireAfter] != "" {
		// Generation was switched off and on again before the credential was revoked: keep it.
		patch := client.MergeFrom(secret.DeepCopy())
		delete(secret.Annotations, AnnotationRetireAfter)
		if err := a.client.Patch(ctx, secret, patch); err != nil {
			return fmt.Errorf("resuming generated secret %s/%s: %w", meta.Namespace, meta.Name, err)
		}
	}
	current := secret.Annotations[AnnotationCredential]
	previous, err := a.revokeDue(ctx, log, bb, issuer, secret, now)
	if err != nil {
		return err
	}

	requested := bb.Annotations[AnnotationRotateCredentials]
	reason := ""
	switch {
	case !exists || current == "" || len(secret.Data) == 0:
		reason = "initial"
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
		if exists && current != "" {
			inUse = append(inUse, current)
		}
		cred, err := issuer.IssueCredential(ctx, bb.Name, inUse)
		if err != nil && reason == "initial" && errors.Is(err, objectstore.ErrUnsupported) {
			return a.passThrough(ctx, log, bb, cfg, err)
		}
		if err != nil {
			return fmt.Errorf("issuing a credential for bucket %q: %w", bb.Name, err)
		}
		annotations := map[string]string{
			AnnotationCredential: cred.ID,
			annotationIssuedAt:   now.Format(time.RFC3339),
		}
		if requested != "" {
			annotations[annotationRotationHonoured] = requested
		}
		if len(inUse) > 0 {
			annotations[annotationPrevious] = current
			annotations[annotationRevokePrevious] = now.Add(grace).Format(time.RFC3339)
		}
		if err := a.writeGenerated(ctx, secret, exists, cred.Data, annotations); err != nil {
			// The new credential is not recorded: the next pass issues again, which invalidates it.
			return err
		}
		log.Info("Published a generated credential", "reason", reason, "credential", cred.ID, "secret", meta.Namespace+"/"+meta.Name)
		a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialPublished, "Publish",
			"Published generated credential %q in %s/%s (%s)", cred.ID, meta.Namespace, meta.Name, reason)
		// Without a grace period the previous credential is due at once (secret is as written).
		if _, err := a.revokeDue(ctx, log, bb, issuer, secret, time.Now().UTC()); err != nil {
			return err
		}
	}

	ref := &corev1.SecretReference{Namespace: meta.Namespace, Name: meta.Name}
	return a.patchStatus(ctx, bb, ref, gardencorev1beta1.ConditionTrue, "Published",
		fmt.Sprintf("Shoots use generated credential %q of secret %s/%s", secret.Annotations[AnnotationCredential], meta.Namespace, meta.Name))
}

// passThrough leaves shoots on the operator's credentials when the store cannot issue generated
// ones and the providerConfig allows it, and says so; otherwise that is an error.
func (a *actuator) passThrough(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg any, cause error) error {
	if g := generated.Of(cfg); g == nil || !g.AllowPassThrough {
		return fmt.Errorf("issuing a credential for bucket %q: %w (generatedCredentials.allowPassThrough: true keeps shoots on the operator's credentials instead)", bb.Name, cause)
	}
	msg := fmt.Sprintf("Shoots keep the operator's credentials (generatedCredentials.allowPassThrough): the store cannot issue generated credentials: %v", cause)
	log.Info("Generated credentials are not possible; passing the operator's through, as allowed", "cause", cause.Error())
	a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonPassThrough, "Publish", "%s", msg)
	return a.patchStatus(ctx, bb, nil, gardencorev1beta1.ConditionFalse, "PassThrough", msg)
}

// retireCredentials handles a bucket whose providerConfig does not (or no longer) ask for
// generated credentials. If some were published, status.generatedSecretRef is cleared at once, so
// that gardenlet moves the entries back to the operator's credentials; the generated ones stay
// valid for the default grace period, then they are revoked and their secret deleted.
func (a *actuator) retireCredentials(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg any) error {
	secret, exists, err := readGenerated(ctx, a.reader, bb)
	if err != nil {
		return err
	}
	if !exists {
		if bb.Status.GeneratedSecretRef == nil {
			return nil // nothing was ever generated: the common case
		}
		return a.patchStatus(ctx, bb, nil, gardencorev1beta1.ConditionFalse, "Retired", "Shoots use the operator's credentials: the generated secret is gone")
	}
	now := time.Now().UTC()
	ids := credentialIDs(secret)
	due := secret.Annotations[AnnotationRetireAfter]
	if due == "" {
		_, grace := rotationOf(cfg)
		due = now.Add(grace).Format(time.RFC3339)
		patch := client.MergeFrom(secret.DeepCopy())
		if secret.Annotations == nil {
			secret.Annotations = map[string]string{}
		}
		secret.Annotations[AnnotationRetireAfter] = due
		if err := a.client.Patch(ctx, secret, patch); err != nil {
			return fmt.Errorf("recording the retirement on %s/%s: %w", secret.Namespace, secret.Name, err)
		}
		log.Info("Generated credentials are no longer asked for; shoots move back to the operator's", "credentials", ids, "revokeAfter", due)
		a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonRetiring, "Retire",
			"Generated credentials are no longer asked for: shoots move back to the operator's credentials as their entries are reconciled; %q stays valid until %s, then it is revoked", ids, due)
	}
	if now.Before(parseTime(due)) {
		return a.patchStatus(ctx, bb, nil, gardencorev1beta1.ConditionFalse, "Retiring",
			fmt.Sprintf("Shoots move back to the operator's credentials; generated credential %q is revoked after %s", ids, due))
	}
	if err := a.revokeRetired(ctx, log, bb, cfg, ids); err != nil {
		return err
	}
	if err := a.client.Delete(ctx, secret); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting generated secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return a.patchStatus(ctx, bb, nil, gardencorev1beta1.ConditionFalse, "Retired", "Shoots use the operator's credentials; the generated ones are revoked")
}

// revokeRetired revokes every generated credential of the bucket with a store built to revoke
// them (the normal one no longer issues). A provider that cannot do so with the operator's
// current credentials gets a warning naming what to revoke by hand.
func (a *actuator) revokeRetired(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg any, ids string) error {
	store, err := controller.NewStore(ctx, a.reader, a.provider, bb.Spec.SecretRef, provider.Credentials{Region: bb.Spec.Region, BucketConfig: cfg, Retiring: true})
	if err != nil {
		return err
	}
	issuer, ok := store.(objectstore.CredentialIssuer)
	if !ok {
		log.Info("The operator's credentials cannot revoke the generated credentials", "credentials", ids)
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonNotRevoked, "Revoke",
			"The operator's current credentials cannot revoke generated credential %q: revoke it by hand", ids)
		return nil
	}
	if err := issuer.RevokeCredentials(ctx, bb.Name, nil); err != nil {
		return fmt.Errorf("revoking the generated credentials of bucket %q: %w", bb.Name, err)
	}
	log.Info("Revoked the retired generated credentials", "credentials", ids)
	a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialRevoked, "Revoke", "Revoked the retired generated credential %q", ids)
	return nil
}

// patchStatus sets status.generatedSecretRef and the GeneratedCredentials condition, writing
// only what changed and never another writer's conditions (BucketAvailable).
func (a *actuator) patchStatus(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, ref *corev1.SecretReference, status gardencorev1beta1.ConditionStatus, reason, message string) error {
	err := controller.PatchStatus(ctx, a.client, a.reader, bb, func(bb *extensionsv1alpha1.BackupBucket) bool {
		old := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionGeneratedCredentials)
		sameRef := (ref == nil && bb.Status.GeneratedSecretRef == nil) || (ref != nil && bb.Status.GeneratedSecretRef != nil && *ref == *bb.Status.GeneratedSecretRef)
		if sameRef && old != nil && old.Status == status && old.Reason == reason && old.Message == message {
			return false
		}
		bb.Status.GeneratedSecretRef = ref
		bb.Status.Conditions, _ = controller.SetCondition(bb.Status.Conditions, ConditionGeneratedCredentials, status, reason, message, time.Now())
		return true
	})
	if err != nil {
		return fmt.Errorf("setting status.generatedSecretRef and the %s condition: %w", ConditionGeneratedCredentials, err)
	}
	return nil
}

// revokeDue revokes the previous credential recorded on the generated secret once its grace
// period is over, then drops it from the record. It returns the previous credential still in use.
func (a *actuator) revokeDue(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, issuer objectstore.CredentialIssuer, secret *corev1.Secret, now time.Time) (string, error) {
	current, previous := secret.Annotations[AnnotationCredential], secret.Annotations[annotationPrevious]
	if previous == "" || now.Before(parseTime(secret.Annotations[annotationRevokePrevious])) {
		return previous, nil
	}
	if err := issuer.RevokeCredentials(ctx, bb.Name, []string{current}); err != nil {
		return "", fmt.Errorf("revoking the previous credential %q of bucket %q: %w", previous, bb.Name, err)
	}
	log.Info("Revoked the previous generated credential", "credential", previous)
	a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialRevoked, "Revoke", "Revoked the previous generated credential %q", previous)
	patch := client.MergeFrom(secret.DeepCopy())
	delete(secret.Annotations, annotationPrevious)
	delete(secret.Annotations, annotationRevokePrevious)
	if err := a.client.Patch(ctx, secret, patch); err != nil {
		return "", fmt.Errorf("recording the revocation on %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return "", nil
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
	delete(secret.Annotations, annotationPrevious)
	delete(secret.Annotations, annotationRevokePrevious)
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

// dropCredentials revokes every generated credential of a deleted bucket and deletes the
// generated secret.
func (a *actuator) dropCredentials(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, store objectstore.Store, cfg any) error {
	secret, published, err := readGenerated(ctx, a.reader, bb)
	if err != nil {
		return err
	}
	if issuer, ok := store.(objectstore.CredentialIssuer); ok {
		if err := issuer.RevokeCredentials(ctx, bb.Name, nil); err != nil {
			return fmt.Errorf("revoking the generated credentials of bucket %q: %w", bb.Name, err)
		}
	} else if published {
		// Generation was switched off before the bucket was deleted: revoke what is left.
		if err := a.revokeRetired(ctx, log, bb, cfg, credentialIDs(secret)); err != nil {
			return err
		}
	}
	if !published {
		return nil
	}
	if err := a.client.Delete(ctx, secret); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting generated secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	log.Info("Generated credentials are revoked and their secret deleted", "secret", secret.Namespace+"/"+secret.Name)
	return nil
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s) // unparsable: the zero time, that is "long ago"
	return t
}
