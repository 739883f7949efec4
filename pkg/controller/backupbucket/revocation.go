// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	securityv1alpha1constants "github.com/gardener/gardener/pkg/apis/security/v1alpha1/constants"

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

// dropCredentials revokes every generated credential of a deleted bucket, with each issuer that
// issued one (the configured issuer too: a pass may have issued one it never recorded), and
// deletes the generated secret.
func (a *actuator) dropCredentials(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) error {
	secret, published, err := readGenerated(ctx, a.reader, bb)
	if err != nil {
		return err
	}
	if published {
		if err := a.execution(log, bb, cfg, nil, nil, secret, published).run(ctx, revokeRecorded(secret)); err != nil {
			return err
		}
	}
	if g := cfg.GenerationSettings(); g != nil && (!published || g.Issuer != secret.Annotations[AnnotationIssuer]) {
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
