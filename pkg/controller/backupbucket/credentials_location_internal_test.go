// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"errors"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Revocation only where a credential was issued: when the operator's credentials reach another
// place (another account, project or Keystone user), nothing is said to be revoked, the record
// stays, and the operator is told what to do; their word (revoked-by-hand) drops the record.

func TestRevocationWhereTheIssuerNoLongerReaches(t *testing.T) {
	cases := []struct {
		name string
		// due makes a revocation of ids due; revoke runs the pass that tries it.
		due    func(f *genFixture)
		ids    string
		revoke func(f *genFixture) error
	}{
		{"previous credential after its grace", func(f *genFixture) {
			f.requestRotation("1")
			f.mustReconcile()
			f.setSecretAnnotation(annotationRevokePrevious, past())
		}, "cred-1", (*genFixture).reconcile},
		{"retirement after its grace", func(f *genFixture) {
			f.configure(nil)
			f.mustReconcile()
			f.setSecretAnnotation(AnnotationRetireAfter, past())
		}, "cred-1", (*genFixture).reconcile},
		{"bucket deletion", func(*genFixture) {}, "cred-1", func(f *genFixture) error {
			f.calls = nil
			return f.actuator.Delete(f.ctx, logr.Discard(), f.bucket())
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", grace(time.Hour)))
			f.mustReconcile()
			if s := f.mustSecret(); !strings.HasPrefix(s.Annotations[AnnotationIssuedIn], "memstore:") {
				t.Fatalf("where the credential was issued is not recorded: %v", s.Annotations)
			}
			c.due(f)
			f.events()
			// The operator's credentials now reach another place: the issuer built from them
			// finds nothing of this store's to revoke, which it would call success.
			f.mem.MoveIssuer("memstore:elsewhere")
			valid := f.mem.Valid(genBucket)

			for range 2 {
				err := c.revoke(f)
				expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
				var elsewhere *objectstore.CredentialElsewhereError
				if !errors.As(err, &elsewhere) || elsewhere.Current != "memstore:elsewhere" {
					t.Fatalf("error %v; want a CredentialElsewhereError", err)
				}
				if !strings.Contains(err.Error(), AnnotationRevokedByHand+"="+c.ids) {
					t.Fatalf("error %q does not say how to record a revocation by hand", err)
				}
				expectValid(t, f.mem, valid...)
				s := f.mustSecret()
				if !strings.Contains(credentialIDs(s), c.ids) {
					t.Fatalf("the record of %s is dropped: %v", c.ids, s.Annotations)
				}
				f.expectEvents("Warning " + ReasonNotRevoked)
				cond := f.expectCondition(gardencorev1beta1.ConditionUnknown, reasonNotRevoked, true)
				if !strings.Contains(cond.Message, "NOT revoked") {
					t.Fatalf("condition message %q", cond.Message)
				}
			}

			// The operator revoked it by hand and says so: the record goes, nothing says Revoked.
			f.setSecretAnnotation(AnnotationRevokedByHand, c.ids)
			if err := c.revoke(f); err != nil {
				t.Fatalf("after the revocation by hand: %v", err)
			}
			if s := f.secret(); s != nil && strings.Contains(credentialIDs(s), c.ids) {
				t.Fatalf("%s is still recorded: %v", c.ids, s.Annotations)
			}
			for _, e := range f.events() {
				if strings.Contains(e, ReasonCredentialRevoked) {
					t.Fatalf("event %q reports a revocation the store did not confirm", e)
				}
			}
		})
	}
}

// The operator's credentials can no longer build the issuer at all (an Azure account key secret
// replaced a service principal): the retired credential is not revoked, nor said to be, and stays
// recorded until the operator records its revocation by hand.
func TestRetirementWhenTheOperatorsCredentialsIssueNone(t *testing.T) {
	f := newGenFixture(t, true)
	f.configure(settings("mem", nil))
	f.mustReconcile()
	f.configure(nil)
	f.mustReconcile()
	f.setSecretAnnotation(AnnotationRetireAfter, past())
	f.provider.issuers["mem"] = nil
	f.events()

	err := f.reconcile()
	expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
	if !strings.Contains(err.Error(), AnnotationRevokedByHand+"=cred-1") {
		t.Fatalf("error %q does not say how to record a revocation by hand", err)
	}
	if s := f.mustSecret(); s.Annotations[AnnotationCredential] != "cred-1" {
		t.Fatalf("the record is dropped: %v", s.Annotations)
	}
	f.expectCondition(gardencorev1beta1.ConditionUnknown, reasonNotRevoked, true)
	f.expectEvents("Warning " + ReasonNotRevoked)
	expectValid(t, f.mem, "cred-1")

	f.setSecretAnnotation(AnnotationRevokedByHand, "cred-1")
	f.mustReconcile()
	f.expectCondition(gardencorev1beta1.ConditionFalse, "Retired", true)
	f.expectEvents("Normal " + ReasonRecordDropped)
}

// A record that does not say which issuer issued a credential, or where, was not written by this
// extension (it has always written both): nothing is revoked by a guessed issuer or in a guessed
// place, and it is reported as a credential out of reach until the operator records its
// revocation by hand.
func TestARecordWithoutIssuerOrPlaceIsNotGuessed(t *testing.T) {
	for _, c := range []struct {
		name    string
		prepare func(f *genFixture)
		id      string
	}{
		{"retiring, no issuer recorded", func(f *genFixture) {
			f.configure(nil)
			f.mustReconcile()
			f.setSecretAnnotation(AnnotationIssuer, "")
			f.setSecretAnnotation(AnnotationRetireAfter, past())
		}, "cred-1"},
		{"rotating, no place of the previous recorded", func(f *genFixture) {
			f.requestRotation("1")
			f.mustReconcile()
			f.setSecretAnnotation(annotationPreviousIssuedIn, "")
			f.setSecretAnnotation(annotationRevokePrevious, past())
		}, "cred-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newGenFixture(t, true)
			f.configure(settings("mem", grace(time.Hour)))
			f.mustReconcile()
			c.prepare(f)
			valid := f.mem.Valid(genBucket)
			f.events()

			err := f.reconcile()
			expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
			expectValid(t, f.mem, valid...)
			f.expectCondition(gardencorev1beta1.ConditionUnknown, reasonNotRevoked, true)
			f.expectEvents("Warning " + ReasonNotRevoked)
			if !strings.Contains(err.Error(), AnnotationRevokedByHand+"="+c.id) {
				t.Fatalf("error %q does not say how to record a revocation by hand", err)
			}

			f.setSecretAnnotation(AnnotationRevokedByHand, c.id)
			f.mustReconcile()
			if strings.Contains(credentialIDs(f.mustSecret()), c.id) {
				t.Fatalf("%s is still recorded: %v", c.id, f.mustSecret().Annotations)
			}
			expectValid(t, f.mem, valid...)
		})
	}
}
