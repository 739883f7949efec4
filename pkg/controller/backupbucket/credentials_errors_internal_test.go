// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestGeneratedCredentialErrorCodes(t *testing.T) {
	wrap := func(sentinel error) error { return fmt.Errorf("identity service says no: %w", sentinel) }
	t.Run("credentials secret missing", func(t *testing.T) {
		f := newGenFixture(t, false)
		f.configure(settings("mem", nil))
		err := f.reconcile()
		expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
		if !errors.As(err, new(*secrets.MissingError)) {
			t.Fatalf("error %v; want a secrets.MissingError", err)
		}
	})
	t.Run("invalid providerConfig", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("mem", &credentials.Rotation{Period: &metav1.Duration{Duration: time.Minute}}))
		err := f.reconcile()
		expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
		if !strings.Contains(err.Error(), "spec.providerConfig.generatedCredentials.rotation.period") {
			t.Fatalf("error %v; want the field path under spec.providerConfig", err)
		}
		if f.secret() != nil || len(f.mem.Valid(genBucket)) != 0 {
			t.Fatal("a credential was issued")
		}
	})
	t.Run("unknown issuer", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("nobody", nil))
		expectCode(t, f.reconcile(), gardencorev1beta1.ErrorConfigurationProblem)
	})
	t.Run("the issuer of the previous credential is gone", func(t *testing.T) {
		f, b := issuersAB(t)
		f.configure(settings("a", grace(time.Hour)))
		f.mustReconcile()
		f.configure(settings("b", grace(time.Hour)))
		f.mustReconcile()
		f.setSecretAnnotation(annotationRevokePrevious, past())
		delete(f.provider.issuers, "a")
		expectCode(t, f.reconcile(), gardencorev1beta1.ErrorConfigurationProblem)
		// Still recorded, so that it is revoked once a can be built again; nothing else happened.
		if s := f.expectPublished("cred-1", "b"); s.Annotations[annotationPrevious] != "cred-1" || s.Annotations[annotationPreviousIssuer] != "a" {
			t.Fatalf("the previous credential is no longer recorded: %v", s.Annotations)
		}
		expectValid(t, f.mem, "cred-1")
		expectValid(t, b, "cred-1")
		if len(f.calls) != 0 {
			t.Fatalf("issuer calls %q", f.calls)
		}
	})

	for _, c := range []struct {
		sentinel error
		code     gardencorev1beta1.ErrorCode
	}{
		{objectstore.ErrUnauthenticated, gardencorev1beta1.ErrorInfraUnauthenticated},
		{objectstore.ErrForbidden, gardencorev1beta1.ErrorInfraUnauthorized},
		{objectstore.ErrThrottled, gardencorev1beta1.ErrorInfraRateLimitsExceeded},
		{objectstore.ErrInvalidConfig, gardencorev1beta1.ErrorConfigurationProblem},
	} {
		t.Run("issuing: "+c.sentinel.Error(), func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", nil))
			f.provider.issuers["mem"].issueErr = wrap(c.sentinel)
			err := f.reconcile()
			expectCode(t, err, c.code)
			if _, requeue := err.(*reconcilerutils.RequeueAfterError); requeue != (c.sentinel == objectstore.ErrThrottled) {
				t.Fatalf("error %T %v: requeue only when throttled", err, err)
			}
			if f.secret() != nil || f.condition() != nil || f.bucket().Status.GeneratedSecretRef != nil {
				t.Fatal("something was published")
			}
		})
		t.Run("revoking the previous: "+c.sentinel.Error(), func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", grace(time.Hour)))
			f.mustReconcile()
			f.requestRotation("1")
			f.mustReconcile()
			f.setSecretAnnotation(annotationRevokePrevious, past())
			f.provider.issuers["mem"].revokeErr = wrap(c.sentinel)
			expectCode(t, f.reconcile(), c.code)
			// Still recorded, so that the next pass revokes it.
			if s := f.expectPublished("cred-2", "mem"); s.Annotations[annotationPrevious] != "cred-1" {
				t.Fatalf("the previous credential is no longer recorded: %v", s.Annotations)
			}
			expectValid(t, f.mem, "cred-1", "cred-2")
		})
		t.Run("revoking on retirement: "+c.sentinel.Error(), func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", nil))
			f.mustReconcile()
			f.configure(nil)
			f.mustReconcile()
			f.setSecretAnnotation(AnnotationRetireAfter, past())
			f.provider.issuers["mem"].revokeErr = wrap(c.sentinel)
			expectCode(t, f.reconcile(), c.code)
			if f.secret() == nil {
				t.Fatal("the generated secret was deleted although its credential was not revoked")
			}
			expectValid(t, f.mem, "cred-1")
		})
		t.Run("revoking on deletion: "+c.sentinel.Error(), func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", nil))
			f.mustReconcile()
			f.provider.issuers["mem"].revokeErr = wrap(c.sentinel)
			expectCode(t, f.actuator.Delete(f.ctx, logr.Discard(), f.bucket()), c.code)
			if f.secret() == nil {
				t.Fatal("the generated secret was deleted although its credential was not revoked")
			}
		})
	}
}
