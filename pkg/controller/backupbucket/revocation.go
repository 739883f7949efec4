package backupbucket

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// recordKeys are the generated secret's annotations about generated credentials, dropped once
// they are revoked.
var recordKeys = []string{AnnotationCredential, AnnotationIssuer, annotationIssuedAt, annotationPrevious,
	annotationPreviousIssuer, annotationRevokePrevious, annotationRotationHonoured, AnnotationRetireAfter}

// retireCredentials handles a bucket whose providerConfig does not (or no longer) ask for
// generated credentials, or whose credentials issue none. If some were published, the generated
// secret gets a copy of the operator's credentials at once and status.generatedSecretRef keeps
// naming it: gardenlet hands that secret to the entries and never lets go of the reference, so
// they move back to the operator's credentials as their entries are synced. The generated
// credentials stay valid for the grace period, then they are revoked; the copy stays, and is
// kept current with the operator's secret, until the bucket is deleted.
func (a *actuator) retireCredentials(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg config.Bucket) error {
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
	operator, err := controller.ReadSecretData(ctx, a.reader, bb.Spec.SecretRef)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	ids := credentialIDs(secret)
	ref := &corev1.SecretReference{Namespace: secret.Namespace, Name: secret.Name}
	due := secret.Annotations[AnnotationRetireAfter]
	starting := ids != "" && due == ""
	if starting {
		due = now.Add(config.GeneratedCredentials(cfg).Grace()).Format(time.RFC3339)
	}
	if starting || !hasAnnotation(secret, AnnotationOperatorCopy) || !maps.EqualFunc(secret.Data, operator, bytes.Equal) {
		if secret.Annotations == nil {
			secret.Annotations = map[string]string{}
		}
		if starting {
			secret.Annotations[AnnotationRetireAfter] = due
		}
		secret.Annotations[AnnotationOperatorCopy] = "true"
		secret.Data = operator
		if err := a.client.Update(ctx, secret); err != nil {
			return fmt.Errorf("copying the operator's credentials into %s/%s: %w", secret.Namespace, secret.Name, err)
		}
	}
	if starting {
		log.Info("Generated credentials are no longer asked for; shoots move back to the operator's", "credentials", ids, "revokeAfter", due)
		a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonRetiring, "Retire",
			"Generated credentials are no longer asked for: %s/%s now holds the operator's credentials, and shoots move to them as their entries are synced; %q stays valid until %s, then it is revoked", secret.Namespace, secret.Name, ids, due)
	}
	if ids != "" && now.Before(parseTime(due)) {
		return a.patchStatus(ctx, bb, ref, gardencorev1beta1.ConditionFalse, "Retiring",
			fmt.Sprintf("Shoots move back to the operator's credentials, which secret %s/%s now holds; generated credential %q is revoked after %s", secret.Namespace, secret.Name, ids, due))
	}
	if ids != "" {
		if err := a.revokeRecorded(ctx, log, bb, cfg, secret); err != nil {
			return err
		}
		patch := client.MergeFrom(secret.DeepCopy())
		for _, key := range recordKeys {
			delete(secret.Annotations, key)
		}
		if err := a.client.Patch(ctx, secret, patch); err != nil {
			return fmt.Errorf("recording the revocation on %s/%s: %w", secret.Namespace, secret.Name, err)
		}
	}
	return a.patchStatus(ctx, bb, ref, gardencorev1beta1.ConditionFalse, "Retired",
		fmt.Sprintf("Shoots use the operator's credentials, which secret %s/%s holds; the generated ones are revoked", secret.Namespace, secret.Name))
}

// revokeRecorded revokes every credential the generated secret records, each with the issuer
// that issued it, built from the operator's credentials. Where those cannot revoke (the provider
// builds no issuer for them) a warning names what to revoke by hand.
func (a *actuator) revokeRecorded(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg config.Bucket, secret *corev1.Secret) error {
	ids := credentialIDs(secret)
	if ids == "" {
		return nil // nothing recorded (a copy of the operator's credentials, revoked before)
	}
	g := config.GeneratedCredentials(cfg)
	names := []string{issuedBy(secret, g)}
	if secret.Annotations[annotationPrevious] != "" && previousIssuedBy(secret, g) != names[0] {
		names = append(names, previousIssuedBy(secret, g))
	}
	for _, name := range names {
		issuer, err := a.newIssuer(ctx, bb, cfg, name)
		if err != nil {
			return err
		}
		if issuer == nil {
			log.Info("The operator's credentials cannot revoke the generated credentials", "credentials", ids, "issuer", name)
			a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonNotRevoked, "Revoke",
				"The operator's current credentials cannot revoke generated credential %q: revoke it by hand", ids)
			continue
		}
		if err := issuer.RevokeCredentials(ctx, bb.Name, nil); err != nil {
			return fmt.Errorf("revoking the generated credentials of bucket %q (issuer %q): %w", bb.Name, name, err)
		}
		log.Info("Revoked the generated credentials", "credentials", ids, "issuer", name)
		a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialRevoked, "Revoke", "Revoked the generated credential %q", ids)
	}
	return nil
}

// revokeDue revokes the previous credential recorded on the generated secret once its grace
// period is over, then drops it from the record. It returns the previous credential still in use.
func (a *actuator) revokeDue(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg config.Bucket, g *credentials.Settings, issuer objectstore.CredentialIssuer, secret *corev1.Secret, now time.Time) (string, error) {
	current, previous := secret.Annotations[AnnotationCredential], secret.Annotations[annotationPrevious]
	if previous == "" || now.Before(parseTime(secret.Annotations[annotationRevokePrevious])) {
		return previous, nil
	}
	keep := []string{current}
	name := previousIssuedBy(secret, g)
	if name != issuedBy(secret, g) {
		// The previous credential came from another issuer than the current one: that one
		// revokes all it issued.
		keep = nil
	}
	if name != g.Issuer {
		// Not the configured issuer (which the config changed since): the one that issued it.
		previousIssuer, err := a.newIssuer(ctx, bb, cfg, name)
		if err != nil {
			return "", err
		}
		if previousIssuer == nil {
			return "", fmt.Errorf("revoking the previous credential %q of bucket %q: %w", previous, bb.Name,
				objectstore.Invalidf("the operator's credentials cannot build issuer %q, which issued it", name))
		}
		issuer = previousIssuer
	}
	if err := issuer.RevokeCredentials(ctx, bb.Name, keep); err != nil {
		return "", fmt.Errorf("revoking the previous credential %q of bucket %q: %w", previous, bb.Name, err)
	}
	log.Info("Revoked the previous generated credential", "credential", previous)
	a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialRevoked, "Revoke", "Revoked the previous generated credential %q", previous)
	patch := client.MergeFrom(secret.DeepCopy())
	delete(secret.Annotations, annotationPrevious)
	delete(secret.Annotations, annotationPreviousIssuer)
	delete(secret.Annotations, annotationRevokePrevious)
	if err := a.client.Patch(ctx, secret, patch); err != nil {
		return "", fmt.Errorf("recording the revocation on %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return "", nil
}

// dropCredentials revokes every generated credential of a deleted bucket, with each issuer that
// issued one (the configured issuer too: a pass may have issued one it never recorded), and
// deletes the generated secret.
func (a *actuator) dropCredentials(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg config.Bucket) error {
	secret, published, err := readGenerated(ctx, a.reader, bb)
	if err != nil {
		return err
	}
	if published {
		if err := a.revokeRecorded(ctx, log, bb, cfg, secret); err != nil {
			return err
		}
	}
	if g := config.GeneratedCredentials(cfg); g != nil && (!published || g.Issuer != issuedBy(secret, g)) {
		issuer, err := a.newIssuer(ctx, bb, cfg, g.Issuer)
		if err != nil {
			return err
		}
		if issuer != nil {
			if err := issuer.RevokeCredentials(ctx, bb.Name, nil); err != nil {
				return fmt.Errorf("revoking the generated credentials of bucket %q: %w", bb.Name, err)
			}
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
