package backupbucket

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener/gardener/extensions/pkg/controller/backupbucket"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/rotation"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// AnnotationRotateCredentials on a BackupBucket requests a rotation of its generated credential:
// each new value (any token, for example a date) is honoured once.
const AnnotationRotateCredentials = "backup.extensions.gardener.cloud/rotate-credentials"

// What the generated secret records about the credentials it stands for (IDs, never values).
const (
	annotationCredential       = "backup.extensions.gardener.cloud/credential"
	annotationIssuedAt         = "backup.extensions.gardener.cloud/issued-at"
	annotationPrevious         = "backup.extensions.gardener.cloud/previous-credential"
	annotationRevokePrevious   = "backup.extensions.gardener.cloud/revoke-previous-after"
	annotationRotationHonoured = "backup.extensions.gardener.cloud/rotation-request"
)

// Event reasons of generated credentials (the note names IDs, never values).
const (
	ReasonCredentialPublished = "GeneratedCredentialPublished"
	ReasonCredentialRevoked   = "GeneratedCredentialRevoked"
	ReasonRotationWaiting     = "GeneratedCredentialRotationWaiting"
)

// RotationPolicy is implemented by a provider's decoded BackupBucket config that configures the
// rotation of generated credentials.
type RotationPolicy interface {
	// RotationPeriod rotates a credential when it is this old (0: only on request).
	RotationPeriod() time.Duration
	// Grace keeps the previous credential valid this long after a rotation.
	Grace() time.Duration
}

func rotationOf(cfg any) (period, grace time.Duration) {
	if rp, ok := cfg.(RotationPolicy); ok {
		return rp.RotationPeriod(), rp.Grace()
	}
	return 0, rotation.DefaultGracePeriod
}

// publishCredential keeps the bucket's generated secret and status.generatedSecretRef current:
// it issues the first credential, rotates it by period or on request (the new one is published
// before the previous is revoked, after its grace period) and revokes what has outlived its grace.
func (a *actuator) publishCredential(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, issuer objectstore.CredentialIssuer, cfg any) error {
	period, grace := rotationOf(cfg)
	meta := backupbucket.GeneratedSecretObjectMeta(bb)
	secret := &corev1.Secret{}
	err := a.reader.Get(ctx, client.ObjectKey{Namespace: meta.Namespace, Name: meta.Name}, secret)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading generated secret %s/%s: %w", meta.Namespace, meta.Name, err)
	}
	now := time.Now().UTC()
	current := secret.Annotations[annotationCredential]
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
		if err != nil {
			return fmt.Errorf("issuing a credential for bucket %q: %w", bb.Name, err)
		}
		annotations := map[string]string{
			annotationCredential: cred.ID,
			annotationIssuedAt:   now.Format(time.RFC3339),
		}
		if requested != "" {
			annotations[annotationRotationHonoured] = requested
		}
		if len(inUse) > 0 {
			annotations[annotationPrevious] = current
			annotations[annotationRevokePrevious] = now.Add(grace).Format(time.RFC3339)
		}
		if err := a.writeGenerated(ctx, meta.Namespace, meta.Name, cred.Data, annotations); err != nil {
			// The new credential is not recorded: the next pass issues again, which invalidates it.
			return err
		}
		log.Info("Published a generated credential", "reason", reason, "credential", cred.ID, "secret", meta.Namespace+"/"+meta.Name)
		a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialPublished, "Publish",
			"Published generated credential %q in %s/%s (%s)", cred.ID, meta.Namespace, meta.Name, reason)
		// Without a grace period the previous credential is due at once.
		if err := a.reader.Get(ctx, client.ObjectKey{Namespace: meta.Namespace, Name: meta.Name}, secret); err != nil {
			return fmt.Errorf("reading generated secret %s/%s: %w", meta.Namespace, meta.Name, err)
		}
		if _, err := a.revokeDue(ctx, log, bb, issuer, secret, time.Now().UTC()); err != nil {
			return err
		}
	}

	ref := &corev1.SecretReference{Namespace: meta.Namespace, Name: meta.Name}
	if got := bb.Status.GeneratedSecretRef; got == nil || *got != *ref {
		patch := client.MergeFrom(bb.DeepCopy())
		bb.Status.GeneratedSecretRef = ref
		if err := a.client.Status().Patch(ctx, bb, patch); err != nil {
			return fmt.Errorf("setting status.generatedSecretRef: %w", err)
		}
	}
	return nil
}

// revokeDue revokes the previous credential recorded on the generated secret once its grace
// period is over, then drops it from the record. It returns the previous credential still in use.
func (a *actuator) revokeDue(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, issuer objectstore.CredentialIssuer, secret *corev1.Secret, now time.Time) (string, error) {
	current, previous := secret.Annotations[annotationCredential], secret.Annotations[annotationPrevious]
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

// writeGenerated creates or replaces the generated secret's data and sets the annotations given
// (other annotations, the previous credential's among them, are replaced as a whole).
func (a *actuator) writeGenerated(ctx context.Context, namespace, name string, data map[string][]byte, annotations map[string]string) error {
	secret := &corev1.Secret{}
	err := a.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret)
	if apierrors.IsNotFound(err) {
		secret.Namespace, secret.Name, secret.Type = namespace, name, corev1.SecretTypeOpaque
		secret.Annotations, secret.Data = annotations, data
		if err := a.client.Create(ctx, secret); err != nil {
			return fmt.Errorf("creating generated secret %s/%s: %w", namespace, name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading generated secret %s/%s: %w", namespace, name, err)
	}
	for k := range secret.Annotations {
		if k == annotationPrevious || k == annotationRevokePrevious {
			delete(secret.Annotations, k)
		}
	}
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	maps.Copy(secret.Annotations, annotations)
	secret.Data = data
	if err := a.client.Update(ctx, secret); err != nil {
		return fmt.Errorf("updating generated secret %s/%s: %w", namespace, name, err)
	}
	return nil
}

// dropCredentials revokes every generated credential of a deleted bucket and deletes the
// generated secret.
func (a *actuator) dropCredentials(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, store objectstore.Store) error {
	if issuer, ok := store.(objectstore.CredentialIssuer); ok {
		if err := issuer.RevokeCredentials(ctx, bb.Name, nil); err != nil {
			return fmt.Errorf("revoking the generated credentials of bucket %q: %w", bb.Name, err)
		}
	}
	meta := backupbucket.GeneratedSecretObjectMeta(bb)
	secret := &corev1.Secret{}
	secret.Namespace, secret.Name = meta.Namespace, meta.Name
	if err := a.client.Delete(ctx, secret); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting generated secret %s/%s: %w", meta.Namespace, meta.Name, err)
	}
	log.Info("Generated credentials are revoked and their secret deleted", "secret", meta.Namespace+"/"+meta.Name)
	return nil
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s) // unparsable: the zero time, that is "long ago"
	return t
}
