// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

func TestGeneratedCredentialIsIssuedOnceAndPublished(t *testing.T) {
	f := newGenFixture(t, true)
	// The plain test provider: the store's issuer for every name.
	f.actuator = NewActuator(provider.Register(controllertest.Provider{Store: f.mem, Issuer: f.mem.Issuer()}), f.client, f.client, f.recorder, options.DeletionOptions{})
	f.configure(&credentials.Settings{Issuer: "mem"})

	f.mustReconcile()
	s := f.expectPublished("cred-1", "mem")
	if string(s.Data[memstore.KeyBucket]) != genBucket || s.Annotations[annotationIssuedAt] == "" || s.Annotations[annotationPrevious] != "" {
		t.Fatalf("generated secret %v %v", s.Data, s.Annotations)
	}
	expectValid(t, f.mem, "cred-1")
	f.expectEvents("Normal " + ReasonCredentialPublished)
	// What is published reaches the bucket, and only it.
	view := f.mem.ForCredential(s.Data)
	if err := view.PutObject(f.ctx, genBucket, "shoot--a--b--1/x", []byte("x")); err != nil {
		t.Fatalf("the published credential does not reach its bucket: %v", err)
	}

	// Nothing to do: no credential, no write, no event.
	bb := f.bucket()
	f.mustReconcile()
	expectValid(t, f.mem, "cred-1")
	if again := f.mustSecret(); again.ResourceVersion != s.ResourceVersion {
		t.Fatalf("the secret was written again: %v", again.Annotations)
	}
	if again := f.bucket(); again.ResourceVersion != bb.ResourceVersion {
		t.Fatalf("the bucket was written again: %+v", again.Status)
	}
	f.expectEvents()
}

func TestGeneratedCredentialRotation(t *testing.T) {
	cases := []struct {
		name string
		r    *credentials.Rotation
		// rotate triggers the rotation (by request or by age).
		rotate func(f *genFixture, token string)
	}{
		{"on request", grace(time.Hour), func(f *genFixture, token string) { f.requestRotation(token) }},
		{"by period", &credentials.Rotation{Period: &metav1.Duration{Duration: 24 * time.Hour}, GracePeriod: &metav1.Duration{Duration: time.Hour}},
			func(f *genFixture, _ string) {
				f.setSecretAnnotation(annotationIssuedAt, time.Now().Add(-25*time.Hour).UTC().Format(time.RFC3339))
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", c.r))
			f.mustReconcile()
			f.expectPublished("cred-1", "mem")
			f.events()
			// Not due yet: no rotation.
			f.mustReconcile()
			expectValid(t, f.mem, "cred-1")

			c.rotate(f, "1")
			f.mustReconcile()
			s := f.expectPublished("cred-2", "mem")
			if s.Annotations[annotationPrevious] != "cred-1" || s.Annotations[annotationPreviousIssuer] != "mem" {
				t.Fatalf("the previous credential is not recorded: %v", s.Annotations)
			}
			if due := parseTime(s.Annotations[annotationRevokePrevious]); time.Until(due) < 59*time.Minute || time.Until(due) > time.Hour {
				t.Fatalf("revoke-previous-after %v; want in the grace period of 1h", due)
			}
			expectValid(t, f.mem, "cred-1", "cred-2") // the previous one stays valid in its grace period
			f.expectEvents("Normal " + ReasonCredentialPublished)
			if got := f.calls; !slices.Equal(got, []string{"mem issue [cred-1]"}) {
				t.Fatalf("issuer calls %q", got)
			}

			// Another rotation while the previous credential is in its grace period waits.
			c.rotate(f, "2")
			f.mustReconcile()
			f.expectPublished("cred-2", "mem")
			expectValid(t, f.mem, "cred-1", "cred-2")
			f.expectEvents("Warning " + ReasonRotationWaiting)

			// Grace over: the previous credential is revoked, then the waiting rotation follows.
			f.setSecretAnnotation(annotationRevokePrevious, past())
			f.mustReconcile()
			s = f.expectPublished("cred-3", "mem")
			if s.Annotations[annotationPrevious] != "cred-2" {
				t.Fatalf("annotations %v", s.Annotations)
			}
			expectValid(t, f.mem, "cred-2", "cred-3")
			f.expectEvents("Normal "+ReasonCredentialRevoked, "Normal "+ReasonCredentialPublished)
			if got := f.calls; !slices.Equal(got, []string{"mem revoke [cred-2]", "mem issue [cred-2]"}) {
				t.Fatalf("issuer calls %q", got)
			}
		})
	}
}

func TestGeneratedCredentialRotationWithoutGraceRevokesAtOnce(t *testing.T) {
	f := newGenFixture(t, true)
	f.configure(settings("mem", grace(0)))
	f.mustReconcile()
	f.requestRotation("now")
	f.mustReconcile()
	s := f.expectPublished("cred-2", "mem")
	expectValid(t, f.mem, "cred-2")
	for _, k := range []string{annotationPrevious, annotationPreviousIssuer, annotationRevokePrevious} {
		if _, ok := s.Annotations[k]; ok {
			t.Fatalf("%s still recorded: %v", k, s.Annotations)
		}
	}
	if s.Annotations[annotationRotationHonoured] != "now" {
		t.Fatalf("the request is not recorded as honoured: %v", s.Annotations)
	}
	f.events()
	// The same request is honoured once.
	f.mustReconcile()
	f.expectPublished("cred-2", "mem")
	expectValid(t, f.mem, "cred-2")
	f.expectEvents()
}

// issuersAB is a fixture whose issuers "a" (over the bucket's store) and "b" (another identity
// service, its own store) issue independently.
func issuersAB(t *testing.T) (f *genFixture, b *memstore.Store) {
	f = newGenFixture(t, true)
	b = memstore.New(10)
	f.addIssuer("a", f.mem)
	f.addIssuer("b", b)
	return f, b
}

func TestGeneratedCredentialIssuerChange(t *testing.T) {
	for _, g := range []time.Duration{time.Hour, 0} {
		t.Run("grace "+g.String(), func(t *testing.T) {
			f, b := issuersAB(t)
			f.configure(settings("a", grace(g)))
			f.mustReconcile()
			f.expectPublished("cred-1", "a")
			f.configure(settings("b", grace(g)))
			f.mustReconcile()
			s := f.expectPublished("cred-1", "b") // b's first
			expectValid(t, b, "cred-1")
			if g > 0 {
				if s.Annotations[annotationPrevious] != "cred-1" || s.Annotations[annotationPreviousIssuer] != "a" {
					t.Fatalf("a's credential is not recorded as the previous one: %v", s.Annotations)
				}
				expectValid(t, f.mem, "cred-1") // a's stays valid in its grace period
				if got := f.calls; !slices.Equal(got, []string{"b issue []"}) {
					t.Fatalf("issuer calls %q", got)
				}
				f.setSecretAnnotation(annotationRevokePrevious, past())
				f.mustReconcile()
				f.expectPublished("cred-1", "b")
			}
			// a's credential is revoked by a, b's is not touched.
			expectValid(t, f.mem)
			expectValid(t, b, "cred-1")
			for _, call := range f.calls {
				if strings.HasPrefix(call, "b revoke") {
					t.Fatalf("the new issuer revoked: %q", f.calls)
				}
			}
			if !slices.Contains(f.calls, "a revoke []") {
				t.Fatalf("a did not revoke its credential: %q", f.calls)
			}
			if s := f.mustSecret(); s.Annotations[annotationPrevious] != "" || s.Annotations[annotationPreviousIssuer] != "" {
				t.Fatalf("the revoked credential is still recorded: %v", s.Annotations)
			}
		})
	}
}

// A credential rotated within issuer a, whose configured issuer then becomes b: once its grace
// period is over, the previous credential (a's) is revoked by a, not by the configured b.
func TestGeneratedCredentialPreviousOfTheFormerIssuerIsRevokedByIt(t *testing.T) {
	f, b := issuersAB(t)
	f.configure(settings("a", grace(time.Hour)))
	f.mustReconcile()
	f.requestRotation("1")
	f.mustReconcile()
	f.expectPublished("cred-2", "a")
	expectValid(t, f.mem, "cred-1", "cred-2")

	f.configure(settings("b", grace(time.Hour)))
	f.mustReconcile() // the issuer change waits for the previous credential's revocation
	f.expectPublished("cred-2", "a")
	f.events()
	f.setSecretAnnotation(annotationRevokePrevious, past())
	f.mustReconcile()
	s := f.expectPublished("cred-1", "b")
	if s.Annotations[annotationPrevious] != "cred-2" || s.Annotations[annotationPreviousIssuer] != "a" {
		t.Fatalf("annotations %v", s.Annotations)
	}
	// a's cred-1 is revoked (by a), a's cred-2 stays valid in its grace period.
	expectValid(t, f.mem, "cred-2")
	expectValid(t, b, "cred-1")
	if len(f.calls) == 0 || f.calls[0] != "a revoke [cred-2]" {
		t.Fatalf("issuer calls %q; want a to revoke its previous credential first", f.calls)
	}
}

func TestGeneratedCredentialPassThrough(t *testing.T) {
	t.Run("allowed", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.mem.RefuseIssuing("no identity service")
		f.configure(&credentials.Settings{Issuer: "mem", Generation: credentials.Generation{AllowPassThrough: true}})
		f.mustReconcile()
		c := f.expectCondition(gardencorev1beta1.ConditionFalse, "PassThrough", false)
		if !strings.Contains(c.Message, "no identity service") {
			t.Fatalf("condition message %q does not say why", c.Message)
		}
		if s := f.secret(); s != nil {
			t.Fatalf("a generated secret was written: %v", s.Annotations)
		}
		f.expectEvents("Warning " + ReasonPassThrough)

		// Once the store issues, the credential is published.
		f.mem.RefuseIssuing("")
		f.mustReconcile()
		f.expectPublished("cred-1", "mem")
	})
	t.Run("not allowed", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.mem.RefuseIssuing("no identity service")
		f.configure(&credentials.Settings{Issuer: "mem"})
		err := f.reconcile()
		expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
		if !errors.Is(err, objectstore.ErrUnsupported) || !strings.Contains(err.Error(), "allowPassThrough") {
			t.Fatalf("error %v; want ErrUnsupported naming allowPassThrough", err)
		}
		if f.secret() != nil || f.condition() != nil || f.bucket().Status.GeneratedSecretRef != nil {
			t.Fatal("something was published")
		}
	})
	t.Run("a store that stops issuing fails the rotation", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(&credentials.Settings{Issuer: "mem", Generation: credentials.Generation{AllowPassThrough: true}})
		f.mustReconcile()
		f.mem.RefuseIssuing("no identity service")
		f.requestRotation("1")
		expectCode(t, f.reconcile(), gardencorev1beta1.ErrorConfigurationProblem)
		f.expectPublished("cred-1", "mem")
		expectValid(t, f.mem, "cred-1")
	})
}
