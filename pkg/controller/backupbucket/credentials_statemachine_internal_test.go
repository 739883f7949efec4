// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// The credential lifecycle of docs/generated-credentials.md walked through every state, with a
// controller restart (a fresh actuator on the same API state) before every step, and its two
// invariants checked after each: no transition revokes the credential a published secret names,
// and no revocation is reported that the store did not confirm.

// lifecycleState names the state of docs/generated-credentials.md the bucket is in.
func (f *genFixture) lifecycleState() string {
	s := f.secret()
	c := f.condition()
	switch {
	case s == nil && c == nil:
		return "none"
	case s == nil:
		return "revoked"
	case c != nil && c.Reason == reasonNotRevoked:
		return "issuer changed"
	case c != nil && c.Reason == reasonResuming:
		return "resuming"
	case hasAnnotation(s, AnnotationOperatorCopy) && credentialIDs(s) != "":
		return "retiring"
	case hasAnnotation(s, AnnotationOperatorCopy):
		return "retired"
	case s.Annotations[annotationPrevious] != "":
		return "rotating"
	default:
		return "issued"
	}
}

var quotedIDs = regexp.MustCompile(`"([^"]*)"`)

// checkInvariants checks the published credential is valid, and that every credential an event
// since the last call reports revoked is invalid in the store.
func (f *genFixture) checkInvariants(step string) {
	f.t.Helper()
	valid := f.mem.Valid(genBucket)
	if s := f.secret(); s != nil && !hasAnnotation(s, AnnotationOperatorCopy) {
		if id := string(s.Data[memstore.KeyCredential]); id != "" && !slices.Contains(valid, id) {
			f.t.Fatalf("%s: the published credential %s is revoked (valid: %v)", step, id, valid)
		}
	}
	for _, e := range f.events() {
		if !strings.Contains(e, ReasonCredentialRevoked) {
			continue
		}
		m := quotedIDs.FindStringSubmatch(e)
		if m == nil {
			f.t.Fatalf("%s: event %q names no credential", step, e)
		}
		for _, id := range strings.Split(m[1], ",") {
			if slices.Contains(valid, id) {
				f.t.Fatalf("%s: event %q reports %s revoked, but the store still accepts it", step, e, id)
			}
		}
	}
}

func TestCredentialLifecycleWithARestartAtEveryStep(t *testing.T) {
	rotation := &credentials.Rotation{Period: &metav1.Duration{Duration: 24 * time.Hour}, GracePeriod: &metav1.Duration{Duration: time.Hour}}
	on := func(f *genFixture) { f.configure(settings("mem", rotation)) }
	off := func(f *genFixture) { f.configure(nil) }
	request := func(token string) func(f *genFixture) {
		return func(f *genFixture) { f.requestRotation(token) }
	}
	graceOver := func(f *genFixture) { f.setSecretAnnotation(annotationRevokePrevious, past()) }
	periodOver := func(f *genFixture) {
		f.setSecretAnnotation(annotationIssuedAt, time.Now().Add(-25*time.Hour).UTC().Format(time.RFC3339))
	}
	retireOver := func(f *genFixture) { f.setSecretAnnotation(AnnotationRetireAfter, past()) }
	steps := []struct {
		transition string
		do         func(f *genFixture)
		want       string
		fails      bool
	}{
		{"switch on", on, "issued", false},
		{"nothing due", func(*genFixture) {}, "issued", false},
		{"request", request("1"), "rotating", false},
		{"request during the grace (waits)", request("2"), "rotating", false},
		{"grace over (the waiting rotation follows)", graceOver, "rotating", false},
		{"grace over", graceOver, "issued", false},
		{"period", periodOver, "rotating", false},
		{"switch off", off, "retiring", false},
		{"switch on during the retirement, previous in grace (waits)", on, "resuming", false},
		{"grace over (the new credential follows)", graceOver, "rotating", false},
		{"grace over", graceOver, "issued", false},
		{"operator credentials changed (another place), request", func(f *genFixture) {
			f.mem.MoveIssuer("memstore:elsewhere")
			request("3")(f)
		}, "rotating", false},
		{"grace over: the previous one is out of reach", graceOver, "issuer changed", true},
		{"revoked by hand, recorded by the operator", func(f *genFixture) {
			f.setSecretAnnotation(AnnotationRevokedByHand, f.mustSecret().Annotations[annotationPrevious])
		}, "issued", false},
		{"switch off", off, "retiring", false},
		{"switch on during the retirement", on, "rotating", false},
		{"switch off during the rotation's grace", off, "retiring", false},
		{"retirement over", retireOver, "retired", false},
		{"switch on after the retirement", on, "issued", false},
		{"bucket deletion", nil, "revoked", false},
	}
	f := newGenFixture(t, true)
	for i, s := range steps {
		name := s.transition
		if s.do != nil {
			s.do(f)
		}
		f.restart()
		var err error
		if s.do == nil {
			err = f.actuator.Delete(f.ctx, logr.Discard(), f.bucket())
		} else {
			err = f.reconcile()
		}
		if (err != nil) != s.fails {
			t.Fatalf("step %d (%s): error %v; want failure %v", i, name, err, s.fails)
		}
		if got := f.lifecycleState(); got != s.want {
			t.Fatalf("step %d (%s): state %q; want %q (secret %+v, condition %+v)", i, name, got, s.want, f.secret(), f.condition())
		}
		f.checkInvariants(name)
		if s.want == "issued" || s.want == "rotating" {
			if c := f.condition(); c.Status != gardencorev1beta1.ConditionTrue {
				t.Fatalf("step %d (%s): condition %+v", i, name, c)
			}
		}
	}
}
