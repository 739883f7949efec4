package backupbucket

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// retireCredentials handles a bucket whose providerConfig does not (or no longer) ask for
// generated credentials. If some were published, status.generatedSecretRef is cleared at once, so
// that gardenlet moves the entries back to the operator's credentials; the generated ones stay
// valid for the default grace period, then they are revoked and their secret deleted.
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
	now := time.Now().UTC()
	ids := credentialIDs(secret)
	due := secret.Annotations[AnnotationRetireAfter]
	if due == "" {
		due = now.Add(config.GeneratedCredentials(cfg).Grace()).Format(time.RFC3339)
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
	if err := a.revokeRecorded(ctx, log, bb, cfg, secret); err != nil {
		return err
	}
	if err := a.client.Delete(ctx, secret); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting generated secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return a.patchStatus(ctx, bb, nil, gardencorev1beta1.ConditionFalse, "Retired", "Shoots use the operator's credentials; the generated ones are revoked")
}

// revokeRecorded revokes every credential the generated secret records, each with the issuer
// that issued it, built from the operator's credentials. Where those cannot revoke (the provider
// builds no issuer for them) a warning names what to revoke by hand.
func (a *actuator) revokeRecorded(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg config.Bucket, secret *corev1.Secret) error {
	ids := credentialIDs(secret)
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
