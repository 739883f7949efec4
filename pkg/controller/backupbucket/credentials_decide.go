// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// The credential lifecycle of docs/generated-credentials.md as a pure decision: decide takes what
// one pass observed (the generated secret as read, the generation settings, what the configured
// issuer says the operator's copy holds, the operator's secret, now) and returns the plan of the
// pass, steps that execution.run carries out in order with the API server and the
// issuers, stopping at the first that fails. No step depends on the result of an earlier one
// except through its success: a plan is right whenever each of its steps succeeds.

// observed is what one pass of the lifecycle reads before it decides.
type observed struct {
	// secret is the bucket's generated secret as read (its name and namespace set even when it
	// does not exist); exists says whether it does.
	secret *corev1.Secret
	exists bool
	// settings are the generation settings when generated credentials are asked for and the
	// operator's credentials build the configured issuer; nil: retire what was generated.
	settings *credentials.Settings
	// grace is the grace period of a retirement that starts (the providerConfig's, or the
	// default when it asks for no generated credentials).
	grace time.Duration
	// held lists the bucket's credentials that the operator's copy in secret holds, as the
	// configured issuer says (objectstore.CredentialIssuer.HeldIn); read only while settings is
	// set and secret holds such a copy.
	held []string
	// operator is the BackupBucket's credentials secret; read only while retiring (settings nil)
	// and secret exists.
	operator *corev1.Secret
	// requested is the BackupBucket's rotation request (AnnotationRotateCredentials).
	requested string
	// statusRef says whether the BackupBucket's status.generatedSecretRef is set.
	statusRef bool
	now       time.Time
}

// reasonResuming is the GeneratedCredentials condition's reason while generation, switched on
// again during a retirement, waits for a credential to be revoked.
const reasonResuming = "Resuming"

// decide is the plan of one pass of the credential lifecycle. A plan ends with its first step
// that always fails the pass (a refusal or a credential out of reach).
func decide(o observed) []step {
	if o.settings == nil {
		return endAtFailure(decideRetirement(o))
	}
	return endAtFailure(decideGeneration(o))
}

func endAtFailure(plan []step) []step {
	i := slices.IndexFunc(plan, func(s step) bool {
		switch s.(type) {
		case unreachableStep, refuseRetirementStep:
			return true
		}
		return false
	})
	if i < 0 {
		return plan
	}
	return plan[:i+1]
}

// decideGeneration keeps generated credentials published: the first issuance, a rotation by
// period, on request or by a changed issuer (the new credential published before the previous
// one is revoked, after its grace), and switching generation on again during or after a
// retirement.
func decideGeneration(o observed) []step {
	g, secret, now := o.settings, o.secret, o.now
	ann := secret.Annotations
	var plan []step
	if o.exists && hasAnnotation(secret, AnnotationOperatorCopy) {
		if credentialIDs(secret) == "" {
			// Retired: nothing generated is left; a new credential is issued, never one that
			// invalidates what the copy holds.
			return append(plan, issueStep{reason: "initial", inUse: slices.Clone(o.held), honour: o.requested, clear: recordKeys, passThroughable: true},
				published())
		}
		return decideResumption(o)
	}

	current, currentIssuer := ann[AnnotationCredential], ann[AnnotationIssuer]
	previous := ann[annotationPrevious]
	previousInGrace := previous != "" && now.Before(parseTime(ann[annotationRevokePrevious]))
	if previous != "" && !previousInGrace {
		plan = append(plan, revokePrevious(secret, currentIssuer == ann[annotationPreviousIssuer])...)
	}
	reason := ""
	switch {
	case !o.exists || current == "" || len(secret.Data) == 0:
		reason = "initial"
	case currentIssuer != g.Issuer:
		reason = fmt.Sprintf("issuer %q replaces %q", g.Issuer, currentIssuer)
	case o.requested != "" && o.requested != ann[annotationRotationHonoured]:
		reason = "requested"
	case g.RotationPeriod() > 0 && now.Sub(parseTime(ann[annotationIssuedAt])) >= g.RotationPeriod():
		reason = "period"
	}
	if reason != "" && reason != "initial" && previousInGrace {
		// Both credentials are in use: the next rotation waits for the previous one's revocation.
		plan = append(plan, eventStep{corev1.EventTypeWarning, ReasonRotationWaiting, "Rotate",
			fmt.Sprintf("A rotation (%s) waits: the previous credential %q stays valid until %s, then it is revoked and the rotation follows", reason, previous, ann[annotationRevokePrevious])})
		reason = ""
	}
	if reason != "" {
		issue := issueStep{reason: reason, honour: o.requested, passThroughable: reason == "initial", revokeAfter: now.Add(g.Grace())}
		if o.exists && current != "" && currentIssuer == g.Issuer {
			issue.inUse = []string{current} // another issuer's credential is not this issuer's to keep
		}
		if o.exists && current != "" {
			issue.previous = &recordedCredential{current, currentIssuer, ann[AnnotationIssuedIn]}
		}
		plan = append(plan, issue)
		plan = append(plan, revokeAtOnce(issue, g, now)...)
	}
	return append(plan, published())
}

// decideResumption switches generation on again during a retirement's grace: the generated
// secret holds a copy of the operator's credentials, and shoots may still use the generated
// credential recorded on it (until their entries are synced) or the copy. Nothing in use is
// revoked: a new credential is issued and published, and the one recorded becomes the previous
// credential, valid until the retirement's time (the grace it was promised) and at least a
// grace period from now (for shoots on the copy), then revoked where it was issued. A credential
// of the bucket that the copy holds (objectstore.CredentialIssuer.HeldIn: an Azure account key)
// is kept valid and never revoked. Where two credentials are recorded (a rotation's previous
// one still in its grace), the new one waits for the older one's revocation, as a rotation
// does: until then the copy of the operator's credentials stays published.
func decideResumption(o observed) []step {
	g, secret, now := o.settings, o.secret, o.now
	ann := secret.Annotations
	var plan []step
	current, currentIssuer := ann[AnnotationCredential], ann[AnnotationIssuer]
	if previous := ann[annotationPrevious]; previous != "" {
		due := ann[annotationRevokePrevious]
		if now.Before(parseTime(due)) {
			return append(plan, resuming(fmt.Sprintf("Generation is switched on again: a new credential is published once the previous credential %q is revoked after %s; until then shoots keep the operator's credentials, which secret %s/%s holds", previous, due, secret.Namespace, secret.Name))...)
		}
		plan = append(plan, revokePrevious(secret, currentIssuer == ann[annotationPreviousIssuer])...)
	}
	var inUse []string
	if currentIssuer == g.Issuer {
		inUse = append(inUse, current) // another issuer's credential is not this issuer's to keep
	}
	if len(o.held) > 0 && !slices.Contains(o.held, current) {
		// The copy published holds another of the bucket's credentials (Azure: the other account
		// key): a new one would invalidate it or the recorded one. The recorded one is revoked
		// at the retirement's time, as promised, never the copy's; then the new one is issued.
		if due := ann[AnnotationRetireAfter]; now.Before(parseTime(due)) {
			return append(plan, resuming(fmt.Sprintf("Generation is switched on again: the operator's credentials that secret %s/%s holds are credential %q of the bucket, which stays valid; a new credential is published once generated credential %q is revoked after %s", secret.Namespace, secret.Name, strings.Join(o.held, ","), current, due))...)
		}
		cred := recordedCredential{current, currentIssuer, ann[AnnotationIssuedIn]}
		if bad := malformed(cred); bad != nil {
			return append(plan, bad)
		}
		plan = append(plan, revokeStep{issuer: g.Issuer, creds: []recordedCredential{cred}, keep: slices.Clone(o.held)})
		current, inUse = "", nil
	}
	issue := issueStep{reason: "generation switched on again", inUse: append(inUse, o.held...), honour: o.requested}
	if current != "" && !slices.Contains(o.held, current) {
		// The recorded credential keeps the validity the retirement promised it, and the copy
		// shoots may use until their entries are synced stays valid a grace period longer.
		issue.previous = &recordedCredential{current, currentIssuer, ann[AnnotationIssuedIn]}
		issue.revokeAfter = parseTime(ann[AnnotationRetireAfter])
		if graceEnd := now.Add(g.Grace()); issue.revokeAfter.Before(graceEnd) {
			issue.revokeAfter = graceEnd
		}
	}
	// A credential the copy holds is the operator's too: it is not recorded, and never revoked
	// by this extension.
	plan = append(plan, issue)
	plan = append(plan, revokeAtOnce(issue, g, now)...)
	return append(plan, published())
}

// decideRetirement handles a bucket whose providerConfig does not (or no longer) ask for
// generated credentials, or whose credentials issue none. If some were published, the generated
// secret gets a copy of the operator's credentials at once and status.generatedSecretRef keeps
// naming it: gardenlet hands that secret to the entries and never lets go of the reference, so
// they move back to the operator's credentials as their entries are synced. The generated
// credentials stay valid for the grace period, then they are revoked; the copy stays, and is
// kept current with the operator's secret, until the bucket is deleted. Under a workload
// identity nothing is retired (refuseRetirementStep).
func decideRetirement(o observed) []step {
	secret, now := o.secret, o.now
	if !o.exists {
		if !o.statusRef {
			return nil // nothing was ever generated: the common case
		}
		return []step{statusStep{status: gardencorev1beta1.ConditionFalse, reason: "Retired", message: "Shoots use the operator's credentials: the generated secret is gone"}}
	}
	ids := credentialIDs(secret)
	if isWorkloadIdentity(o.operator) {
		return []step{refuseRetirementStep{ids}}
	}
	var plan []step
	due := secret.Annotations[AnnotationRetireAfter]
	starting := ids != "" && due == ""
	if starting {
		due = now.Add(o.grace).Format(time.RFC3339)
	}
	if starting || !hasAnnotation(secret, AnnotationOperatorCopy) || !maps.EqualFunc(secret.Data, o.operator.Data, bytes.Equal) {
		c := copyStep{data: o.operator.Data}
		if starting {
			c.retireAfter = due
		}
		plan = append(plan, c)
	}
	if starting {
		plan = append(plan, eventStep{corev1.EventTypeNormal, ReasonRetiring, "Retire",
			fmt.Sprintf("Generated credentials are no longer asked for: %s/%s now holds the operator's credentials, and shoots move to them as their entries are synced; %q stays valid until %s, then it is revoked", secret.Namespace, secret.Name, ids, due)})
	}
	switch {
	case ids != "" && now.Before(parseTime(due)):
		return append(plan, statusStep{ref: true, status: gardencorev1beta1.ConditionFalse, reason: "Retiring",
			message: fmt.Sprintf("Shoots move back to the operator's credentials, which secret %s/%s now holds; generated credential %q is revoked after %s", secret.Namespace, secret.Name, ids, due)})
	case ids != "":
		return append(plan, completeRetirement(secret, "the generated ones are revoked")...)
	}
	return append(plan, statusStep{ref: true, status: gardencorev1beta1.ConditionFalse, reason: "Retired",
		message: fmt.Sprintf("Shoots use the operator's credentials, which secret %s/%s holds; the generated ones are revoked", secret.Namespace, secret.Name)})
}

// completeRetirement revokes the credentials the retiring generated secret records
// (revokeRecorded), drops their record and says Retired, with how in the condition's message.
func completeRetirement(secret *corev1.Secret, how string) []step {
	return endAtFailure(append(revokeRecorded(secret), dropStep{recordKeys}, statusStep{ref: true, status: gardencorev1beta1.ConditionFalse, reason: "Retired",
		message: fmt.Sprintf("Shoots use the operator's credentials, which secret %s/%s holds; %s", secret.Namespace, secret.Name, how)}))
}

// revokeRecorded revokes every credential the generated secret records, each with the issuer
// that issued it and only where it was issued, keeping what the operator's copy holds. One the
// operator recorded as revoked by hand is dropped without a revocation. A record that does not
// say which issuer issued a credential or where cannot be revoked from here: reported
// (unreachableStep), never guessed.
func revokeRecorded(secret *corev1.Secret) []step {
	var plan []step
	byIssuer := map[string][]recordedCredential{}
	var names []string
	for _, c := range recorded(secret) {
		if revokedByHand(secret, c.id) {
			plan = append(plan, eventStep{corev1.EventTypeNormal, ReasonRecordDropped, "Revoke",
				fmt.Sprintf("Generated credential %q is recorded by the operator as revoked by hand: its record is dropped", c.id)})
			continue
		}
		if bad := malformed(c); bad != nil {
			return append(plan, bad)
		}
		if _, ok := byIssuer[c.issuer]; !ok {
			names = append(names, c.issuer)
		}
		byIssuer[c.issuer] = append(byIssuer[c.issuer], c)
	}
	for _, name := range names {
		plan = append(plan, revokeStep{issuer: name, creds: byIssuer[name], keepHeld: true})
	}
	return plan
}

// revokePrevious revokes the previous credential recorded on the generated secret, whose grace
// is over, where it was issued, then drops it from the record; sameIssuer keeps the current
// credential (the previous one's issuer issued it too), otherwise that issuer revokes all it
// issued for the bucket.
func revokePrevious(secret *corev1.Secret, sameIssuer bool) []step {
	ann := secret.Annotations
	previous := recordedCredential{ann[annotationPrevious], ann[annotationPreviousIssuer], ann[annotationPreviousIssuedIn]}
	if revokedByHand(secret, previous.id) {
		return []step{
			eventStep{corev1.EventTypeNormal, ReasonRecordDropped, "Revoke", fmt.Sprintf("The previous generated credential %q is recorded by the operator as revoked by hand: its record is dropped", previous.id)},
			dropStep{previousKeys},
		}
	}
	if bad := malformed(previous); bad != nil {
		return []step{bad}
	}
	return []step{revokeStep{issuer: previous.issuer, creds: []recordedCredential{previous}, keepCurrent: sameIssuer, previous: true, drop: previousKeys}}
}

// revokeAtOnce revokes the previous credential an issuance records in the same pass when it is
// due at once (no grace period).
func revokeAtOnce(issue issueStep, g *credentials.Settings, now time.Time) []step {
	if issue.previous == nil || now.Before(issue.revokeAfter) {
		return nil
	}
	p := *issue.previous
	if bad := malformed(p); bad != nil {
		return []step{bad}
	}
	return []step{revokeStep{issuer: p.issuer, creds: []recordedCredential{p}, keepCurrent: p.issuer == g.Issuer, previous: true, drop: previousKeys}}
}

// malformed reports a record without its issuer or its place: this extension has always
// written both with every credential, so such a record was not written by it, and revoking by
// a guessed issuer or in a guessed place proves nothing.
func malformed(c recordedCredential) step {
	switch {
	case c.issuer == "":
		return unreachableStep{c.id, objectstore.Invalidf("the generated secret does not record which issuer issued it (annotation %s or %s)", AnnotationIssuer, annotationPreviousIssuer)}
	case c.location == "":
		return unreachableStep{c.id, objectstore.Invalidf("the generated secret does not record where it was issued (annotation %s or %s)", AnnotationIssuedIn, annotationPreviousIssuedIn)}
	}
	return nil
}

// resuming waits, with the copy of the operator's credentials published, for a credential's
// revocation before generation resumes.
func resuming(msg string) []step {
	return []step{
		eventStep{corev1.EventTypeWarning, ReasonRotationWaiting, "Rotate", msg},
		statusStep{ref: true, status: gardencorev1beta1.ConditionFalse, reason: reasonResuming, message: msg},
	}
}

// published says which generated credential shoots use (from the secret as written).
func published() step {
	return statusStep{ref: true, status: gardencorev1beta1.ConditionTrue, reason: "Published", published: true}
}
