// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	securityv1alpha1constants "github.com/gardener/gardener/pkg/apis/security/v1alpha1/constants"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// Every state and transition of docs/generated-credentials.md's state machine as a row of the
// pure decision: what one pass observes, and the plan it carries out. What only the execution
// can find out (where the operator's credentials reach now, whether an issuer can be built, what
// the store says) is tested on the actuator (credentials_*_internal_test.go).

var (
	decideNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	inGrace   = decideNow.Add(time.Hour).Format(time.RFC3339)
	graceOver = decideNow.Add(-time.Minute).Format(time.RFC3339)
	operator  = map[string][]byte{"key": []byte("operator")}
)

// genSecret is a generated secret holding credential data (nil: the operator's copy) with the
// annotations given as key, value pairs.
func genSecret(data map[string][]byte, kv ...string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "generated-bucket-" + genBucket, Annotations: map[string]string{}}, Data: data}
	if data == nil {
		s.Data = maps.Clone(operator)
		s.Annotations[AnnotationOperatorCopy] = "true"
	}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Annotations[kv[i]] = kv[i+1]
	}
	return s
}

// current and previous record credential id of issuer as this extension writes them.
func current(id, issuer string) []string {
	return []string{AnnotationCredential, id, AnnotationIssuer, issuer, AnnotationIssuedIn, "place-" + issuer,
		annotationIssuedAt, decideNow.Add(-time.Hour).Format(time.RFC3339)}
}

func previous(issuer, revokeAfter string) []string {
	const id = "cred-1"
	return []string{annotationPrevious, id, annotationPreviousIssuer, issuer, annotationPreviousIssuedIn, "place-" + issuer, annotationRevokePrevious, revokeAfter}
}

func credData(id string) map[string][]byte {
	return map[string][]byte{memstore.KeyCredential: []byte(id)}
}

func join(parts ...[]string) []string { return slices.Concat(parts...) }

func TestDecideEveryTransition(t *testing.T) {
	rotation := &credentials.Rotation{Period: &metav1.Duration{Duration: 24 * time.Hour}, GracePeriod: &metav1.Duration{Duration: time.Hour}}
	on, onB, noGrace := settings("mem", rotation), settings("b", rotation), settings("mem", grace(0))
	until := func(d time.Duration) string { return decideNow.Add(d).Format(time.RFC3339) }
	grace1h := until(time.Hour)
	operatorSecret := &corev1.Secret{Data: operator}
	workloadIdentity := &corev1.Secret{Data: operator, ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		securityv1alpha1constants.LabelPurpose: securityv1alpha1constants.LabelPurposeWorkloadIdentityTokenRequestor}}}
	published := "status True/Published"
	cases := []struct {
		from, transition string
		o                observed
		want             []string
	}{
		// none
		{"none", "switch on (first reconcile)", observed{settings: on},
			[]string{"issue (initial) inUse []", published}},
		{"none", "generation not asked for", observed{}, nil},
		{"none", "generation not asked for, the secret gone but still named", observed{statusRef: true},
			[]string{"status False/Retired"}},
		// issued
		{"issued", "nothing due", observed{settings: on, exists: true, secret: genSecret(credData("cred-1"), current("cred-1", "mem")...)},
			[]string{published}},
		{"issued", "period", observed{settings: on, exists: true, secret: genSecret(credData("cred-1"), join(current("cred-1", "mem"), []string{annotationIssuedAt, until(-25 * time.Hour)})...)},
			[]string{"issue (period) inUse [cred-1] previous cred-1 of mem until " + grace1h, published}},
		{"issued", "request", observed{settings: on, exists: true, requested: "1", secret: genSecret(credData("cred-1"), current("cred-1", "mem")...)},
			[]string{"issue (requested) inUse [cred-1] previous cred-1 of mem until " + grace1h, published}},
		{"issued", "request honoured before", observed{settings: on, exists: true, requested: "1", secret: genSecret(credData("cred-1"), join(current("cred-1", "mem"), []string{annotationRotationHonoured, "1"})...)},
			[]string{published}},
		{"issued", "request without a grace period (previous revoked at once)", observed{settings: noGrace, exists: true, requested: "1", secret: genSecret(credData("cred-1"), current("cred-1", "mem")...)},
			[]string{"issue (requested) inUse [cred-1] previous cred-1 of mem until " + until(0), "revoke cred-1 by mem keep [current] drop 4", published}},
		{"issued", "issuer change (a to b)", observed{settings: onB, exists: true, secret: genSecret(credData("cred-1"), current("cred-1", "a")...)},
			[]string{`issue (issuer "b" replaces "a") inUse [] previous cred-1 of a until ` + grace1h, published}},
		{"issued", "issuer change without a grace period", observed{settings: settings("b", grace(0)), exists: true, secret: genSecret(credData("cred-1"), current("cred-1", "a")...)},
			[]string{`issue (issuer "b" replaces "a") inUse [] previous cred-1 of a until ` + until(0), "revoke cred-1 by a keep [] drop 4", published}},
		// rotating
		{"rotating", "request during the grace (waits)", observed{settings: on, exists: true, requested: "2", secret: genSecret(credData("cred-2"), join(current("cred-2", "mem"), previous("mem", inGrace))...)},
			[]string{"event " + ReasonRotationWaiting, published}},
		{"rotating", "period during the grace (waits)", observed{settings: on, exists: true, secret: genSecret(credData("cred-2"), join(current("cred-2", "mem"), previous("mem", inGrace), []string{annotationIssuedAt, until(-25 * time.Hour)})...)},
			[]string{"event " + ReasonRotationWaiting, published}},
		{"rotating", "grace over", observed{settings: on, exists: true, secret: genSecret(credData("cred-2"), join(current("cred-2", "mem"), previous("mem", graceOver))...)},
			[]string{"revoke cred-1 by mem keep [current] drop 4", published}},
		{"rotating", "grace over, a request waiting (the rotation follows)", observed{settings: on, exists: true, requested: "2", secret: genSecret(credData("cred-2"), join(current("cred-2", "mem"), previous("mem", graceOver))...)},
			[]string{"revoke cred-1 by mem keep [current] drop 4", "issue (requested) inUse [cred-2] previous cred-2 of mem until " + grace1h, published}},
		{"rotating, previous of issuer a", "grace over (a revokes all it issued)", observed{settings: onB, exists: true, secret: genSecret(credData("cred-2"), join(current("cred-2", "b"), previous("a", graceOver))...)},
			[]string{"revoke cred-1 by a keep [] drop 4", published}},
		{"issuer changed (previous out of reach)", "revoked-by-hand annotation", observed{settings: on, exists: true, secret: genSecret(credData("cred-2"), join(current("cred-2", "mem"), previous("mem", graceOver), []string{AnnotationRevokedByHand, "cred-1"})...)},
			[]string{"event " + ReasonRecordDropped, "drop 4", published}},
		{"rotating, previous recorded without its place", "grace over (reported, never guessed)", observed{settings: on, exists: true, secret: genSecret(credData("cred-2"), join(current("cred-2", "mem"), previous("mem", graceOver), []string{annotationPreviousIssuedIn, ""})...)},
			[]string{"unreachable cred-1"}},
		// switch off
		{"issued", "switch off", observed{exists: true, grace: time.Hour, operator: operatorSecret, secret: genSecret(credData("cred-1"), current("cred-1", "mem")...)},
			[]string{"copy retire-after " + grace1h, "event " + ReasonRetiring, "status False/Retiring"}},
		{"rotating", "switch off", observed{exists: true, grace: time.Hour, operator: operatorSecret, secret: genSecret(credData("cred-2"), join(current("cred-2", "mem"), previous("mem", inGrace))...)},
			[]string{"copy retire-after " + grace1h, "event " + ReasonRetiring, "status False/Retiring"}},
		{"issued", "switch off without a grace period (retired in the same pass)", observed{exists: true, operator: operatorSecret, secret: genSecret(credData("cred-1"), current("cred-1", "mem")...)},
			[]string{"copy retire-after " + until(0), "event " + ReasonRetiring, "revoke cred-1 by mem keep [held] drop 0", "drop 11", "status False/Retired"}},
		{"issued", "switch off, operator secret a workload identity", observed{exists: true, grace: time.Hour, operator: workloadIdentity, secret: genSecret(credData("cred-1"), current("cred-1", "mem")...)},
			[]string{"refuse retirement cred-1"}},
		// retiring
		{"retiring", "nothing due", observed{exists: true, operator: operatorSecret, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, inGrace})...)},
			[]string{"status False/Retiring"}},
		{"retiring", "operator credentials changed", observed{exists: true, operator: &corev1.Secret{Data: map[string][]byte{"key": []byte("rotated")}}, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, inGrace})...)},
			[]string{"copy", "status False/Retiring"}},
		{"retiring", "grace over", observed{exists: true, operator: operatorSecret, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, graceOver})...)},
			[]string{"revoke cred-1 by mem keep [held] drop 0", "drop 11", "status False/Retired"}},
		{"retiring, two issuers recorded", "grace over (each revokes what it issued)", observed{exists: true, operator: operatorSecret, secret: genSecret(nil, join(current("cred-2", "b"), previous("a", inGrace), []string{AnnotationRetireAfter, graceOver})...)},
			[]string{"revoke cred-2 by b keep [held] drop 0", "revoke cred-1 by a keep [held] drop 0", "drop 11", "status False/Retired"}},
		{"retiring, issuer changed", "revoked-by-hand annotation", observed{exists: true, operator: operatorSecret, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, graceOver, AnnotationRevokedByHand, "cred-1"})...)},
			[]string{"event " + ReasonRecordDropped, "drop 11", "status False/Retired"}},
		{"retiring, recorded without its issuer", "grace over (reported, never guessed)", observed{exists: true, operator: operatorSecret, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, graceOver, AnnotationIssuer, ""})...)},
			[]string{"unreachable cred-1"}},
		{"retiring", "operator secret became a workload identity", observed{exists: true, operator: workloadIdentity, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, graceOver})...)},
			[]string{"refuse retirement cred-1"}},
		{"retiring (one recorded)", "switch on", observed{settings: on, exists: true, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, until(3 * time.Hour)})...)},
			[]string{"issue (generation switched on again) inUse [cred-1] previous cred-1 of mem until " + until(3*time.Hour), published}},
		{"retiring (one recorded, retirement over)", "switch on (a grace period from now)", observed{settings: on, exists: true, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, graceOver})...)},
			[]string{"issue (generation switched on again) inUse [cred-1] previous cred-1 of mem until " + grace1h, published}},
		{"retiring (one recorded, retirement over)", "switch on without a grace period", observed{settings: noGrace, exists: true, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, graceOver})...)},
			[]string{"issue (generation switched on again) inUse [cred-1] previous cred-1 of mem until " + until(0), "revoke cred-1 by mem keep [current] drop 4", published}},
		{"retiring (two recorded)", "switch on (resuming)", observed{settings: on, exists: true, secret: genSecret(nil, join(current("cred-2", "mem"), previous("mem", inGrace), []string{AnnotationRetireAfter, until(3 * time.Hour)})...)},
			[]string{"event " + ReasonRotationWaiting, "status False/" + reasonResuming}},
		{"resuming", "older one's grace over (rotating)", observed{settings: on, exists: true, secret: genSecret(nil, join(current("cred-2", "mem"), previous("mem", graceOver), []string{AnnotationRetireAfter, until(3 * time.Hour)})...)},
			[]string{"revoke cred-1 by mem keep [current] drop 4", "issue (generation switched on again) inUse [cred-2] previous cred-2 of mem until " + until(3*time.Hour), published}},
		{"resuming, previous of issuer a", "older one's grace over (a revokes all it issued)", observed{settings: onB, exists: true, secret: genSecret(nil, join(current("cred-2", "b"), previous("a", graceOver), []string{AnnotationRetireAfter, until(3 * time.Hour)})...)},
			[]string{"revoke cred-1 by a keep [] drop 4", "issue (generation switched on again) inUse [cred-2] previous cred-2 of b until " + until(3*time.Hour), published}},
		{"retiring, copy holds the recorded credential", "switch on", observed{settings: on, exists: true, held: []string{"cred-1"}, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, until(3 * time.Hour)})...)},
			[]string{"issue (generation switched on again) inUse [cred-1 cred-1]", published}},
		{"retiring, copy holds another credential of the bucket", "switch on (waits for the retirement)", observed{settings: on, exists: true, held: []string{"cred-2"}, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, until(3 * time.Hour)})...)},
			[]string{"event " + ReasonRotationWaiting, "status False/" + reasonResuming}},
		{"retiring, copy holds another credential of the bucket", "switch on, retirement over", observed{settings: on, exists: true, held: []string{"cred-2"}, secret: genSecret(nil, join(current("cred-1", "mem"), []string{AnnotationRetireAfter, graceOver})...)},
			[]string{"revoke cred-1 by mem keep [cred-2] drop 0", "issue (generation switched on again) inUse [cred-2]", published}},
		// retired
		{"retired", "nothing due", observed{exists: true, operator: operatorSecret, secret: genSecret(nil)},
			[]string{"status False/Retired"}},
		{"retired", "operator credentials changed (rotated)", observed{exists: true, operator: &corev1.Secret{Data: map[string][]byte{"key": []byte("rotated")}}, secret: genSecret(nil)},
			[]string{"copy", "status False/Retired"}},
		{"retired", "switch on", observed{settings: on, exists: true, secret: genSecret(nil)},
			[]string{"issue (initial) inUse []", published}},
		{"retired, copy holds a credential of the bucket", "switch on", observed{settings: on, exists: true, held: []string{"cred-1"}, secret: genSecret(nil)},
			[]string{"issue (initial) inUse [cred-1]", published}},
	}
	for _, c := range cases {
		t.Run(c.from+": "+c.transition, func(t *testing.T) {
			o := c.o
			o.now = decideNow
			if o.secret == nil {
				o.secret = genSecret(map[string][]byte{})
			}
			before := o.secret.DeepCopy()
			var got []string
			for _, s := range decide(o) {
				got = append(got, s.String())
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("plan\n  %q\nwant\n  %q", got, c.want)
			}
			if !reflect.DeepEqual(o.secret, before) {
				t.Fatalf("decide changed the secret it observed: %v", o.secret.Annotations)
			}
		})
	}
}
