// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// credentialLifecycle publishes, rotates, retires and revokes the bucket's generated credentials
// as its providerConfig asks: it observes, decides (decide) and carries the plan out.
func (a *actuator) credentialLifecycle(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) error {
	o, issuer, err := a.observe(ctx, bb, cfg)
	if err != nil {
		return err
	}
	e := a.execution(log, bb, cfg, o.settings, issuer, o.secret, o.exists)
	e.now = o.now
	return e.run(ctx, decide(o))
}

// observe reads what one pass of the lifecycle decides on, and builds the configured issuer
// (nil: generation is not asked for, or the operator's credentials issue none).
func (a *actuator) observe(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) (observed, objectstore.CredentialIssuer, error) {
	g := cfg.GenerationSettings()
	var issuer objectstore.CredentialIssuer
	if g != nil {
		var err error
		if issuer, err = a.newIssuer(ctx, bb, cfg, g.Issuer); err != nil {
			return observed{}, nil, err
		}
	}
	secret, exists, err := readGenerated(ctx, a.reader, bb)
	if err != nil {
		return observed{}, nil, err
	}
	o := observed{
		secret: secret, exists: exists, grace: g.Grace(),
		requested: bb.Annotations[AnnotationRotateCredentials],
		statusRef: bb.Status.GeneratedSecretRef != nil,
		now:       time.Now().UTC(),
	}
	switch {
	case issuer != nil:
		o.settings = g
		if exists && hasAnnotation(secret, AnnotationOperatorCopy) {
			if o.held, err = heldIn(ctx, issuer, bb.Name, secret.Data); err != nil {
				return observed{}, nil, err
			}
		}
	case exists:
		if o.operator, err = a.operatorSecret(ctx, bb); err != nil {
			return observed{}, nil, err
		}
	}
	return o, issuer, nil
}

// execution carries out one pass's plan: everything of the pass lives here, not on the actuator.
type execution struct {
	a   *actuator
	log logr.Logger
	bb  *extensionsv1alpha1.BackupBucket
	cfg provider.Config
	// g and issuer are the generation settings and the configured issuer (nil: none).
	g      *credentials.Settings
	issuer objectstore.CredentialIssuer
	// secret is the generated secret as read, and as each step wrote it since.
	secret *corev1.Secret
	exists bool
	// now is when the pass observed (recorded as a new credential's issue time).
	now time.Time
}

func (a *actuator) execution(log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, g *credentials.Settings, issuer objectstore.CredentialIssuer, secret *corev1.Secret, exists bool) *execution {
	return &execution{a: a, log: log, bb: bb, cfg: cfg, g: g, issuer: issuer, secret: secret, exists: exists, now: time.Now().UTC()}
}

// errStop ends a plan early without an error (a pass-through).
var errStop = errors.New("the plan ends here")

// run carries out plan step by step, stopping at the first step that fails.
func (e *execution) run(ctx context.Context, plan []step) error {
	for _, s := range plan {
		if err := e.do(ctx, s); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

func (e *execution) do(ctx context.Context, s step) error {
	a, bb, secret := e.a, e.bb, e.secret
	switch s := s.(type) {
	case revokeStep:
		return e.revoke(ctx, s)
	case issueStep:
		return e.issue(ctx, s)
	case copyStep:
		if secret.Annotations == nil {
			secret.Annotations = map[string]string{}
		}
		if s.retireAfter != "" {
			secret.Annotations[AnnotationRetireAfter] = s.retireAfter
		}
		secret.Annotations[AnnotationOperatorCopy] = "true"
		secret.Data = s.data
		if err := a.client.Update(ctx, secret); err != nil {
			return fmt.Errorf("copying the operator's credentials into %s/%s: %w", secret.Namespace, secret.Name, err)
		}
		return nil
	case dropStep:
		return e.drop(ctx, s.keys)
	case eventStep:
		e.log.Info(s.message, "reason", s.reason)
		a.recorder.Eventf(bb, nil, s.eventType, s.reason, s.action, "%s", s.message)
		return nil
	case statusStep:
		var ref *corev1.SecretReference
		if s.ref {
			ref = &corev1.SecretReference{Namespace: secret.Namespace, Name: secret.Name}
		}
		message := s.message
		if s.published {
			message = fmt.Sprintf("Shoots use generated credential %q of secret %s/%s: %s", secret.Annotations[AnnotationCredential], secret.Namespace, secret.Name, e.issuer.CredentialReach(bb.Name))
		}
		return a.patchStatus(ctx, bb, ref, s.status, s.reason, message)
	case unreachableStep:
		return a.unreachable(ctx, e.log, bb, secret, s.ids, s.cause)
	case refuseRetirementStep:
		return a.refuseRetirement(ctx, e.log, bb, secret, s.ids)
	}
	return fmt.Errorf("unknown step %T of the credential lifecycle", s)
}

// issuerNamed is the configured issuer when name is its name, otherwise the issuer name built
// from the operator's current credentials (nil: they build none).
func (e *execution) issuerNamed(ctx context.Context, name string) (objectstore.CredentialIssuer, error) {
	if e.issuer != nil && e.g != nil && name == e.g.Issuer {
		return e.issuer, nil
	}
	return e.a.newIssuer(ctx, e.bb, e.cfg, name)
}

// revoke carries out a revokeStep: nothing is revoked, nor said to be, unless the issuer that
// issued the credentials is built from the operator's credentials and reaches where they live.
func (e *execution) revoke(ctx context.Context, s revokeStep) error {
	a, bb, secret := e.a, e.bb, e.secret
	var ids []string
	for _, c := range s.creds {
		ids = append(ids, c.id)
	}
	joined := strings.Join(ids, ",")
	issuer, err := e.issuerNamed(ctx, s.issuer)
	if err != nil {
		return err
	}
	if issuer == nil {
		return a.unreachable(ctx, e.log, bb, secret, joined, objectstore.Invalidf("the operator's current credentials cannot build issuer %q, which issued it", s.issuer))
	}
	for _, c := range s.creds {
		if err := a.checkLocation(ctx, e.log, bb, secret, issuer, c.id, c.location); err != nil {
			return err
		}
	}
	keep := slices.Clone(s.keep)
	if s.keepCurrent {
		keep = append(keep, secret.Annotations[AnnotationCredential])
	}
	if s.keepHeld && hasAnnotation(secret, AnnotationOperatorCopy) {
		// A credential of the bucket that the operator's copy holds is theirs.
		held, err := heldIn(ctx, issuer, bb.Name, secret.Data)
		if err != nil {
			return err
		}
		if len(held) > 0 {
			e.log.Info("Not revoking the credentials the operator's credentials hold", "credentials", strings.Join(held, ","))
			a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonRecordDropped, "Revoke",
				"Generated credential %q is not revoked: the operator's credentials, which secret %s/%s holds, are that credential too; its record is dropped", strings.Join(held, ","), secret.Namespace, secret.Name)
		}
		keep = append(keep, held...)
		ids = slices.DeleteFunc(ids, func(id string) bool { return slices.Contains(held, id) })
		if len(ids) == 0 {
			return e.drop(ctx, s.drop)
		}
		joined = strings.Join(ids, ",")
	}
	what := "the generated credential"
	if s.previous {
		what = "the previous generated credential"
	}
	if err := issuer.RevokeCredentials(objectstore.WithOperation(ctx, objectstore.OpRevokeCredentials), bb.Name, keep); err != nil {
		return fmt.Errorf("revoking %s %q of bucket %q (issuer %q): %w", what, joined, bb.Name, s.issuer, err)
	}
	e.log.Info("Revoked "+what, "credentials", joined, "issuer", s.issuer)
	a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialRevoked, "Revoke", "Revoked %s %q", what, joined)
	return e.drop(ctx, s.drop)
}

// drop drops keys from the generated secret's record.
func (e *execution) drop(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	patch := client.MergeFrom(e.secret.DeepCopy())
	for _, key := range keys {
		delete(e.secret.Annotations, key)
	}
	if err := e.a.client.Patch(ctx, e.secret, patch); err != nil {
		return fmt.Errorf("recording the revocation on %s/%s: %w", e.secret.Namespace, e.secret.Name, err)
	}
	return nil
}

// issue carries out an issueStep with the configured issuer.
func (e *execution) issue(ctx context.Context, s issueStep) error {
	a, bb, secret := e.a, e.bb, e.secret
	cred, err := e.issuer.IssueCredential(objectstore.WithOperation(ctx, objectstore.OpIssueCredential), bb.Name, s.inUse)
	if err != nil && s.passThroughable && errors.Is(err, objectstore.ErrUnsupported) {
		if err := a.passThrough(ctx, e.log, bb, e.g, err); err != nil {
			return err
		}
		return errStop
	}
	if err != nil {
		return fmt.Errorf("issuing a credential for bucket %q: %w", bb.Name, err)
	}
	annotations, err := issuedAnnotations(ctx, e.issuer, e.g, cred, e.now)
	if err != nil {
		return err // not recorded: the next pass issues again, which invalidates it
	}
	if s.honour != "" {
		annotations[annotationRotationHonoured] = s.honour
	}
	if p := s.previous; p != nil {
		annotations[annotationPrevious] = p.id
		annotations[annotationPreviousIssuer] = p.issuer
		annotations[annotationRevokePrevious] = s.revokeAfter.UTC().Format(time.RFC3339)
		annotations[annotationPreviousIssuedIn] = p.location
	}
	for _, key := range s.clear {
		delete(secret.Annotations, key)
	}
	if err := a.writeGenerated(ctx, secret, e.exists, cred.Data, annotations); err != nil {
		return err // the new credential is not recorded: the next pass issues again, which invalidates it
	}
	e.exists = true
	e.log.Info("Published a generated credential", "reason", s.reason, "credential", cred.ID, "secret", secret.Namespace+"/"+secret.Name, "previous", annotations[annotationPrevious])
	a.recorder.Eventf(bb, nil, corev1.EventTypeNormal, ReasonCredentialPublished, "Publish",
		"Published generated credential %q in %s/%s (%s)", cred.ID, secret.Namespace, secret.Name, s.reason)
	return nil
}

// heldIn lists the bucket's credentials that data holds.
func heldIn(ctx context.Context, issuer objectstore.CredentialIssuer, bucket string, data map[string][]byte) ([]string, error) {
	held, err := issuer.HeldIn(objectstore.WithOperation(ctx, objectstore.OpCredentialHeldIn), bucket, data)
	if err != nil {
		return nil, fmt.Errorf("finding which of bucket %q's credentials the operator's copy holds: %w", bucket, err)
	}
	return held, nil
}
