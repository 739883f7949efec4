// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	securityv1alpha1constants "github.com/gardener/gardener/pkg/apis/security/v1alpha1/constants"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// recordKeys are the generated secret's annotations about generated credentials, dropped once
// they are revoked.
var recordKeys = []string{AnnotationCredential, AnnotationIssuer, annotationIssuedAt, annotationPrevious,
	annotationPreviousIssuer, annotationRevokePrevious, annotationRotationHonoured, AnnotationRetireAfter,
	AnnotationIssuedIn, annotationPreviousIssuedIn, AnnotationRevokedByHand}

// previousKeys are the annotations about the previous credential.
var previousKeys = []string{annotationPrevious, annotationPreviousIssuer, annotationRevokePrevious, annotationPreviousIssuedIn}

// retireCredentials handles a bucket whose providerConfig does not (or no longer) ask for
// generated credentials, or whose credentials issue none. If some were published, the generated
// secret gets a copy of the operator's credentials at once and status.generatedSecretRef keeps
// naming it: gardenlet hands that secret to the entries and never lets go of the reference, so
// they move back to the operator's credentials as their entries are synced. The generated
// credentials stay valid for the grace period, then they are revoked; the copy stays, and is
// kept current with the operator's secret, until the bucket is deleted.
func (a *actuator) retireCredentials(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) error {
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
	operatorSecret, err := a.operatorSecret(ctx, bb)
	if err != nil {
		return err
	}
	operator := operatorSecret.Data
	now := time.Now().UTC()
	ids := credentialIDs(secret)
	ref := &corev1.SecretReference{Namespace: secret.Namespace, Name: secret.Name}
	if isWorkloadIdentity(operatorSecret) {
		return a.refuseRetirement(ctx, log, bb, secret, ids)
	}
	due := secret.Annotations[AnnotationRetireAfter]
	starting := ids != "" && due == ""
	if starting {
		due = now.Add(cfg.GenerationSettings().Grace()).Format(time.RFC3339)
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
		return a.completeRetirement(ctx, log, bb, cfg, secret, "the generated ones are revoked")
	}
	return a.patchStatus(ctx, bb, ref, gardencorev1beta1.ConditionFalse, "Retired",
		fmt.Sprintf("Shoots use the operator's credentials, which secret %s/%s holds; the generated ones are revoked", secret.Namespace, secret.Name))
}

// completeRetirement revokes the credentials the retiring generated secret records
// (revokeRecorded), drops their record and says Retired, with how in the condition's message.
func (a *actuator) completeRetirement(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, secret *corev1.Secret, how string) error {
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
	ref := &corev1.SecretReference{Namespace: secret.Namespace, Name: secret.Name}
	return a.patchStatus(ctx, bb, ref, gardencorev1beta1.ConditionFalse, "Retired",
		fmt.Sprintf("Shoots use the operator's credentials, which secret %s/%s holds; %s", secret.Namespace, secret.Name, how))
}

// recordedCredential is one credential the generated secret records.
type recordedCredential struct{ id, issuer, location string }

// recorded lists the credentials the generated secret records: the current one, then the
// previous one.
func recorded(secret *corev1.Secret, g *credentials.Settings) []recordedCredential {
	var out []recordedCredential
	if id := secret.Annotations[AnnotationCredential]; id != "" {
		out = append(out, recordedCredential{id, issuedBy(secret, g), secret.Annotations[AnnotationIssuedIn]})
	}
	if id := secret.Annotations[annotationPrevious]; id != "" {
		out = append(out, recordedCredential{id, previousIssuedBy(secret, g), secret.Annotations[annotationPreviousIssuedIn]})
	}
	return out
}

// operatorSecret reads the BackupBucket's credentials secret from the API server.
func (a *actuator) operatorSecret(ctx context.Context, bb *extensionsv1alpha1.BackupBucket) (*corev1.Secret, error) {
	ref := bb.Spec.SecretRef
	s := &corev1.Secret{}
	err := a.reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s)
	if apierrors.IsNotFound(err) {
		return nil, &secrets.MissingError{Ref: ref}
	}
	if err != nil {
		return nil, fmt.Errorf("reading secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return s, nil
}

// isWorkloadIdentity says whether s is a workload identity secret, whose token gardener's token
// requestor keeps current in that secret only.
func isWorkloadIdentity(s *corev1.Secret) bool {
	return s.Labels[securityv1alpha1constants.LabelPurpose] == securityv1alpha1constants.LabelPurposeWorkloadIdentityTokenRequestor
}

// refuseRetirement leaves the generated secret as it is when the operator's credentials are a
// workload identity: a copy of its short-lived token would never be refreshed, and the providers
// would read it as static credentials, so every shoot's backups would stop once it expires. The
// generated credentials stay published and valid; the operator keeps generation on or switches
// the operator secret to static credentials first.
func (a *actuator) refuseRetirement(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, secret *corev1.Secret, ids string) error {
	ref := &corev1.SecretReference{Namespace: secret.Namespace, Name: secret.Name}
	status, what := gardencorev1beta1.ConditionTrue, fmt.Sprintf("shoots keep generated credential %q, which stays valid", ids)
	if hasAnnotation(secret, AnnotationOperatorCopy) {
		status, what = gardencorev1beta1.ConditionFalse, fmt.Sprintf("secret %s/%s holds a copy of operator credentials written earlier, which is kept as it is", secret.Namespace, secret.Name)
		if ids != "" {
			what += fmt.Sprintf(", and generated credential %q stays valid", ids)
		}
	}
	err := objectstore.Invalidf("spec.secretRef: secret %s/%s is a workload identity (label %s=%s), whose token only gardener refreshes, in that secret: shoots cannot be moved to a copy of it, so generated credentials are not retired (%s); keep generatedCredentials in the providerConfig, or switch the BackupBucket's secret to static credentials first",
		bb.Spec.SecretRef.Namespace, bb.Spec.SecretRef.Name, securityv1alpha1constants.LabelPurpose, securityv1alpha1constants.LabelPurposeWorkloadIdentityTokenRequestor, what)
	log.Info("Generated credentials are not retired: the operator's credentials are a workload identity", "credentials", ids)
	a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonRetirementRefused, "Retire", "%v", err)
	if perr := a.patchStatus(ctx, bb, ref, status, reasonRetirementRefused, err.Error()); perr != nil {
		return errors.Join(err, perr)
	}
	return err
}

// revokeRecorded revokes every credential the generated secret records, each with the issuer
// that issued it, built from the operator's credentials, and only where it was issued. A
// credential that those cannot revoke (no issuer for them, or one that reaches another place) is
// reported and fails the pass: nothing is said to be revoked that was not, and the record stays
// until the operator records it as revoked by hand.
func (a *actuator) revokeRecorded(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, secret *corev1.Secret) error {
	g := cfg.GenerationSettings()
	byIssuer := map[string][]recordedCredential{}
	var names []string
	for _, c := range recorded(secret, g) {
		if revokedByHand(secret, c.id) {
			log.Info("The operator recorded a generated credential as revoked by hand", "credential", c.id)
			a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonRecordDropped, "Revoke",
				"Generated credential %q is recorded by the operator as revoked by hand: its record is dropped", c.id)
			continue
		}
		if _, ok := byIssuer[c.issuer]; !ok {
			names = append(names, c.issuer)
		}
		byIssuer[c.issuer] = append(byIssuer[c.issuer], c)
	}
	for _, name := range names {
		creds := byIssuer[name]
		var ids []string
		for _, c := range creds {
			ids = append(ids, c.id)
		}
		joined := strings.Join(ids, ",")
		issuer, err := a.newIssuer(ctx, bb, cfg, name)
		if err != nil {
			return err
		}
		if issuer == nil {
			return a.unreachable(ctx, log, bb, secret, joined, objectstore.Invalidf("the operator's current credentials cannot build issuer %q, which issued it", name))
		}
		for _, c := range creds {
			if err := a.checkLocation(ctx, log, bb, secret, issuer, c.id, c.location); err != nil {
				return err
			}
		}
		var keep []string // a credential of the bucket that the operator's copy holds is theirs
		if hasAnnotation(secret, AnnotationOperatorCopy) {
			if keep, err = heldIn(ctx, issuer, bb.Name, secret.Data); err != nil {
				return err
			}
		}
		revoked := slices.DeleteFunc(ids, func(id string) bool { return slices.Contains(keep, id) })
		if len(keep) > 0 {
			log.Info("Not revoking the credentials the operator's credentials hold", "credentials", strings.Join(keep, ","))
			a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonRecordDropped, "Revoke",
				"Generated credential %q is not revoked: the operator's credentials, which secret %s/%s holds, are that credential too; its record is dropped", strings.Join(keep, ","), secret.Namespace, secret.Name)
		}
		if len(revoked) == 0 {
			continue
		}
		if err := issuer.RevokeCredentials(objectstore.WithOperation(ctx, objectstore.OpRevokeCredentials), bb.Name, keep); err != nil {
			return fmt.Errorf("revoking the generated credentials of bucket %q (issuer %q): %w", bb.Name, name, err)
		}
		log.Info("Revoked the generated credentials", "credentials", strings.Join(revoked, ","), "issuer", name)
		a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialRevoked, "Revoke", "Revoked the generated credential %q", strings.Join(revoked, ","))
	}
	return nil
}

// revokeDue revokes the previous credential recorded on the generated secret once its grace
// period is over, where it was issued, then drops it from the record. It returns the previous
// credential still in use.
func (a *actuator) revokeDue(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, g *credentials.Settings, issuer objectstore.CredentialIssuer, secret *corev1.Secret, now time.Time) (string, error) {
	current, previous := secret.Annotations[AnnotationCredential], secret.Annotations[annotationPrevious]
	if previous == "" || now.Before(parseTime(secret.Annotations[annotationRevokePrevious])) {
		return previous, nil
	}
	if revokedByHand(secret, previous) {
		log.Info("The operator recorded the previous generated credential as revoked by hand", "credential", previous)
		a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonRecordDropped, "Revoke",
			"The previous generated credential %q is recorded by the operator as revoked by hand: its record is dropped", previous)
		return "", a.dropPrevious(ctx, secret)
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
			return "", a.unreachable(ctx, log, bb, secret, previous, objectstore.Invalidf("the operator's credentials cannot build issuer %q, which issued it", name))
		}
		issuer = previousIssuer
	}
	if err := a.checkLocation(ctx, log, bb, secret, issuer, previous, secret.Annotations[annotationPreviousIssuedIn]); err != nil {
		return "", err
	}
	if err := issuer.RevokeCredentials(objectstore.WithOperation(ctx, objectstore.OpRevokeCredentials), bb.Name, keep); err != nil {
		return "", fmt.Errorf("revoking the previous credential %q of bucket %q: %w", previous, bb.Name, err)
	}
	log.Info("Revoked the previous generated credential", "credential", previous)
	a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialRevoked, "Revoke", "Revoked the previous generated credential %q", previous)
	return "", a.dropPrevious(ctx, secret)
}

// dropPrevious drops the previous credential from the generated secret's record.
func (a *actuator) dropPrevious(ctx context.Context, secret *corev1.Secret) error {
	patch := client.MergeFrom(secret.DeepCopy())
	for _, key := range previousKeys {
		delete(secret.Annotations, key)
	}
	if err := a.client.Patch(ctx, secret, patch); err != nil {
		return fmt.Errorf("recording the revocation on %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return nil
}

// dropCredentials revokes every generated credential of a deleted bucket, with each issuer that
// issued one (the configured issuer too: a pass may have issued one it never recorded), and
// deletes the generated secret.
func (a *actuator) dropCredentials(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) error {
	secret, published, err := readGenerated(ctx, a.reader, bb)
	if err != nil {
		return err
	}
	if published {
		if err := a.revokeRecorded(ctx, log, bb, cfg, secret); err != nil {
			return err
		}
	}
	if g := cfg.GenerationSettings(); g != nil && (!published || g.Issuer != issuedBy(secret, g)) {
		issuer, err := a.newIssuer(ctx, bb, cfg, g.Issuer)
		if err != nil {
			return err
		}
		if issuer != nil {
			if err := issuer.RevokeCredentials(objectstore.WithOperation(ctx, objectstore.OpRevokeCredentials), bb.Name, nil); err != nil {
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
