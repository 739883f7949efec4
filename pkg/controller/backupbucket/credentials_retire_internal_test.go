// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
)

func TestGeneratedCredentialsRetire(t *testing.T) {
	f, _ := issuersAB(t)
	f.configure(settings("a", grace(time.Hour)))
	f.mustReconcile()
	f.requestRotation("1")
	f.mustReconcile() // a's cred-2 published, cred-1 in its grace period
	f.events()

	// Switched off: the reference stays (gardenlet never lets go of it) and the secret it names
	// holds the operator's credentials at once; the generated ones stay valid for the default
	// grace.
	f.configure(nil)
	f.mustReconcile()
	s := f.mustSecret()
	due := s.Annotations[AnnotationRetireAfter]
	if d := time.Until(parseTime(due)); d < credentials.DefaultGracePeriod-time.Minute || d > credentials.DefaultGracePeriod {
		t.Fatalf("retire-after %q; want in the default grace period", due)
	}
	expectOperatorCopy(t, s)
	c := f.expectCondition(gardencorev1beta1.ConditionFalse, "Retiring", true)
	if !strings.Contains(c.Message, due) {
		t.Fatalf("condition message %q does not say when: %s", c.Message, due)
	}
	expectValid(t, f.mem, "cred-1", "cred-2")
	f.expectEvents("Normal " + ReasonRetiring)
	f.mustReconcile() // still retiring: nothing new
	f.expectEvents()
	if got := f.mustSecret().Annotations[AnnotationRetireAfter]; got != due {
		t.Fatalf("retire-after moved from %s to %s", due, got)
	}

	// Grace over: revoked by the issuer recorded (the config names none); the secret keeps the
	// operator's credentials under the reference, and records no generated credential any more.
	f.setSecretAnnotation(AnnotationRetireAfter, past())
	f.mustReconcile()
	expectValid(t, f.mem)
	if !slices.Equal(f.calls, []string{"a revoke []"}) {
		t.Fatalf("issuer calls %q", f.calls)
	}
	s = f.mustSecret()
	expectOperatorCopy(t, s)
	for _, key := range []string{AnnotationCredential, AnnotationIssuer, annotationPrevious, AnnotationRetireAfter} {
		if _, ok := s.Annotations[key]; ok {
			t.Fatalf("the retired secret still records %s: %v", key, s.Annotations)
		}
	}
	f.expectCondition(gardencorev1beta1.ConditionFalse, "Retired", true)
	f.expectEvents("Normal " + ReasonCredentialRevoked)

	// Nothing left to do.
	f.mustReconcile()
	f.expectCondition(gardencorev1beta1.ConditionFalse, "Retired", true)
	if len(f.calls) != 0 {
		t.Fatalf("issuer calls %q", f.calls)
	}

	// The operator rotates their secret: the copy follows at the next reconcile.
	operator := &corev1.Secret{}
	if err := f.client.Get(f.ctx, client.ObjectKey{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, operator); err != nil {
		t.Fatal(err)
	}
	operator.Data = map[string][]byte{"key": []byte("rotated")}
	if err := f.client.Update(f.ctx, operator); err != nil {
		t.Fatal(err)
	}
	f.mustReconcile()
	if got := string(f.mustSecret().Data["key"]); got != "rotated" {
		t.Fatalf("the copy holds %q after the operator's secret changed; want the new value", got)
	}
}

// expectOperatorCopy checks that the generated secret holds the operator's credentials.
func expectOperatorCopy(t *testing.T, s *corev1.Secret) {
	t.Helper()
	operator := map[string][]byte{"key": []byte("operator")}
	if s.Annotations[AnnotationOperatorCopy] == "" || len(s.Data) != len(operator) || string(s.Data["key"]) != string(operator["key"]) {
		t.Fatalf("the generated secret holds %d keys, annotations %v; want a copy of the operator's credentials", len(s.Data), s.Annotations)
	}
}

func TestBucketDeletionRevokesGeneratedCredentials(t *testing.T) {
	t.Run("recorded, previous and unrecorded", func(t *testing.T) {
		f, b := issuersAB(t)
		f.configure(settings("a", grace(time.Hour)))
		f.mustReconcile()
		f.requestRotation("1")
		f.mustReconcile() // a: cred-2 published, cred-1 previous
		// Switched to b, whose pass issued a credential but failed before recording it.
		f.configure(settings("b", grace(time.Hour)))
		if _, err := b.Issuer().IssueCredential(f.ctx, genBucket, nil); err != nil {
			t.Fatal(err)
		}
		expectValid(t, f.mem, "cred-1", "cred-2")
		expectValid(t, b, "cred-1")

		f.calls = nil
		if err := f.actuator.Delete(f.ctx, logr.Discard(), f.bucket()); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		expectValid(t, f.mem)
		expectValid(t, b)
		if f.secret() != nil {
			t.Fatal("the generated secret is still there")
		}
		if !slices.Equal(f.calls, []string{"a revoke []", "b revoke []"}) {
			t.Fatalf("issuer calls %q", f.calls)
		}
	})
	t.Run("issued but never published", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("mem", nil))
		if _, err := f.mem.Issuer().IssueCredential(f.ctx, genBucket, nil); err != nil {
			t.Fatal(err)
		}
		if err := f.actuator.Delete(f.ctx, logr.Discard(), f.bucket()); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		expectValid(t, f.mem)
	})
}
