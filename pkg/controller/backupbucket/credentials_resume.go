package backupbucket

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/config"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// reasonResuming is the GeneratedCredentials condition's reason while generation, switched on
// again during a retirement, waits for a credential to be issued.
const reasonResuming = "Resuming"

// resume switches generation on again during a retirement's grace period: the generated secret
// holds a copy of the operator's credentials, and shoots may still use the generated credential
// recorded on it (until their entries are synced) or the copy. Nothing in use is revoked: a new
// credential is issued and published, and the one recorded becomes the previous credential,
// valid until the retirement's time (the grace it was promised), then revoked where it was
// issued. Where two credentials are recorded (a rotation's previous one still in its grace), the
// new one waits for the older one's revocation, as a rotation does: until then the copy of the
// operator's credentials stays published. waiting is true then.
func (a *actuator) resume(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg config.Bucket, g *credentials.Settings, issuer objectstore.CredentialIssuer, secret *corev1.Secret, now time.Time) (waiting bool, err error) {
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
	var inUse []string
	if currentIssuer == g.Issuer {
		inUse = []string{current} // another issuer's credential is not this issuer's to keep
	}
	cred, err := issuer.IssueCredential(ctx, bb.Name, inUse)
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
	// The recorded credential keeps the validity the retirement promised it, and never less
	// than now.
	revokeAfter := parseTime(secret.Annotations[AnnotationRetireAfter])
	if revokeAfter.Before(now) {
		revokeAfter = now
	}
	recordPrevious(annotations, secret, currentIssuer, revokeAfter)
	if err := a.writeGenerated(ctx, secret, true, cred.Data, annotations); err != nil {
		return false, err
	}
	log.Info("Published a generated credential", "reason", "generation switched on again", "credential", cred.ID, "previous", current, "revokeAfter", annotations[annotationRevokePrevious])
	a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialPublished, "Publish",
		"Published generated credential %q in %s/%s (generation switched on again; %q stays valid until %s)", cred.ID, secret.Namespace, secret.Name, current, annotations[annotationRevokePrevious])
	return false, nil
}
