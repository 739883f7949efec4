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
	securityv1alpha1constants "github.com/gardener/gardener/pkg/apis/security/v1alpha1/constants"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// Switching generation off and on again: the retirement, its refusal under a workload identity,
// and switching on during and after a retirement.

// operatorIsWorkloadIdentity labels the operator's secret as gardener's token requestor does.
func (f *genFixture) operatorIsWorkloadIdentity() {
	f.t.Helper()
	s := &corev1.Secret{}
	if err := f.client.Get(f.ctx, client.ObjectKey{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, s); err != nil {
		f.t.Fatal(err)
	}
	metav1.SetMetaDataLabel(&s.ObjectMeta, securityv1alpha1constants.LabelPurpose, securityv1alpha1constants.LabelPurposeWorkloadIdentityTokenRequestor)
	s.Data = map[string][]byte{"config": []byte("{}"), "token": []byte("short-lived")}
	if err := f.client.Update(f.ctx, s); err != nil {
		f.t.Fatal(err)
	}
}

func TestRetirementIsRefusedUnderAWorkloadIdentity(t *testing.T) {
	f := newGenFixture(t, true)
	f.configure(settings("mem", nil))
	f.mustReconcile()
	published := f.expectPublished("cred-1", "mem")
	f.events()
	f.operatorIsWorkloadIdentity()

	f.configure(nil) // switched off
	for range 2 {    // and again: nothing changes
		err := f.reconcile()
		expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
		for _, want := range []string{"workload identity", "keep generatedCredentials", "static credentials"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not say %q", err, want)
			}
		}
		s := f.mustSecret()
		if s.ResourceVersion != published.ResourceVersion || string(s.Data[memstore.KeyCredential]) != "cred-1" {
			t.Fatalf("the generated secret was changed: %v %v", s.Annotations, s.Data)
		}
		expectValid(t, f.mem, "cred-1")
		c := f.expectCondition(gardencorev1beta1.ConditionTrue, reasonRetirementRefused, true)
		if !strings.Contains(c.Message, `"cred-1"`) {
			t.Fatalf("condition message %q does not say which credential stays", c.Message)
		}
		if got := f.events(); len(got) != 1 || !strings.HasPrefix(got[0], "Warning "+ReasonRetirementRefused) || strings.Contains(got[0], "short-lived") {
			t.Fatalf("events %q", got)
		}
	}

	// Generation on again: everything as before.
	f.configure(settings("mem", nil))
	f.mustReconcile()
	f.expectPublished("cred-1", "mem")
	expectValid(t, f.mem, "cred-1")
}

func TestSwitchedOnAgainDuringRetirement(t *testing.T) {
	t.Run("one credential recorded", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("mem", nil))
		f.mustReconcile()
		f.configure(nil)
		f.mustReconcile()
		f.expectCondition(gardencorev1beta1.ConditionFalse, "Retiring", true)
		retireAfter := f.mustSecret().Annotations[AnnotationRetireAfter]
		f.events()

		// Entries may use cred-1 (not synced yet) or the operator's copy: a new credential is
		// published, cred-1 stays valid until the retirement's time, then it is revoked.
		f.configure(settings("mem", nil))
		f.mustReconcile()
		s := f.expectPublished("cred-2", "mem")
		// Valid as long as the retirement promised, and a grace period for shoots on the copy.
		due := parseTime(s.Annotations[annotationRevokePrevious])
		if s.Annotations[annotationPrevious] != "cred-1" || due.Before(parseTime(retireAfter)) || time.Until(due) < credentials.DefaultGracePeriod-time.Minute {
			t.Fatalf("cred-1 is not recorded as the previous credential until a grace period from now (and not before %s): %v", retireAfter, s.Annotations)
		}
		for _, key := range []string{AnnotationRetireAfter, AnnotationOperatorCopy} {
			if _, ok := s.Annotations[key]; ok {
				t.Fatalf("%s is still recorded: %v", key, s.Annotations)
			}
		}
		expectValid(t, f.mem, "cred-1", "cred-2")
		f.expectEvents("Normal " + ReasonCredentialPublished)

		f.setSecretAnnotation(annotationRevokePrevious, past())
		f.mustReconcile()
		f.expectPublished("cred-2", "mem")
		expectValid(t, f.mem, "cred-2")
		f.expectEvents("Normal " + ReasonCredentialRevoked)
	})
	t.Run("a rotation's previous credential still in its grace", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("mem", grace(time.Hour)))
		f.mustReconcile()
		f.requestRotation("1")
		f.mustReconcile() // cred-2 published, cred-1 previous
		f.configure(nil)
		f.mustReconcile()
		f.events()

		// Two credentials recorded, both may be in use: the new one waits for cred-1's grace,
		// the operator's copy stays published meanwhile, nothing is revoked.
		f.configure(settings("mem", grace(time.Hour)))
		f.mustReconcile()
		expectOperatorCopy(t, f.mustSecret())
		c := f.expectCondition(gardencorev1beta1.ConditionFalse, reasonResuming, true)
		if !strings.Contains(c.Message, `"cred-1"`) {
			t.Fatalf("condition message %q does not name what it waits for", c.Message)
		}
		expectValid(t, f.mem, "cred-1", "cred-2")
		f.expectEvents("Warning " + ReasonRotationWaiting)

		f.setSecretAnnotation(annotationRevokePrevious, past())
		f.mustReconcile()
		s := f.expectPublished("cred-3", "mem")
		if s.Annotations[annotationPrevious] != "cred-2" {
			t.Fatalf("cred-2 is not the previous credential: %v", s.Annotations)
		}
		expectValid(t, f.mem, "cred-2", "cred-3")
		f.expectEvents("Normal "+ReasonCredentialRevoked, "Normal "+ReasonCredentialPublished)
	})
	t.Run("after the retirement", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("mem", nil))
		f.mustReconcile()
		f.configure(nil)
		f.mustReconcile()
		f.setSecretAnnotation(AnnotationRetireAfter, past())
		f.mustReconcile()
		f.expectCondition(gardencorev1beta1.ConditionFalse, "Retired", true)
		expectValid(t, f.mem)

		f.configure(settings("mem", nil))
		f.mustReconcile()
		s := f.expectPublished("cred-2", "mem")
		if _, ok := s.Annotations[annotationPrevious]; ok {
			t.Fatalf("a previous credential is recorded: %v", s.Annotations)
		}
		expectValid(t, f.mem, "cred-2")
	})
}

// The bucket's settings do not converge (EnsureBucket keeps failing) while it is there: its
// credentials are still rotated, and the error is still reported.
func TestCredentialsAreKeptCurrentWhileTheBucketDoesNotConverge(t *testing.T) {
	f := newGenFixture(t, true)
	f.configure(settings("mem", grace(time.Hour)))
	f.mustReconcile()
	faults := memstore.WithFaults(f.mem)
	f.provider.Store = faults
	f.restart()
	faults.Fail(memstore.OpEnsureBucket, objectstore.Invalidf("the lifecycle configuration is refused"))

	f.requestRotation("1")
	err := f.reconcile()
	expectCode(t, err, gardencorev1beta1.ErrorConfigurationProblem)
	if !strings.Contains(err.Error(), "the lifecycle configuration is refused") {
		t.Fatalf("error %v does not report EnsureBucket's", err)
	}
	f.expectPublished("cred-2", "mem")
	expectValid(t, f.mem, "cred-1", "cred-2")

	// Without the bucket (it cannot be read) nothing is issued.
	faults.Fail(memstore.OpProbe, objectstore.ErrBucketNotFound)
	f.requestRotation("2")
	f.setSecretAnnotation(annotationRevokePrevious, past())
	if err := f.reconcile(); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("error %v; want EnsureBucket's", err)
	}
	f.expectPublished("cred-2", "mem")
	expectValid(t, f.mem, "cred-1", "cred-2")
}

// setOperatorData replaces the operator's secret's data (a key of the bucket, as an Azure
// account key secret holds one).
func (f *genFixture) setOperatorData(data map[string][]byte) {
	f.t.Helper()
	s := &corev1.Secret{}
	if err := f.client.Get(f.ctx, client.ObjectKey{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, s); err != nil {
		f.t.Fatal(err)
	}
	s.Data = data
	if err := f.client.Update(f.ctx, s); err != nil {
		f.t.Fatal(err)
	}
}

// The operator's copy holds one of the bucket's own credentials (Azure: an account key secret of
// the bucket's account holds key1 or key2): it is never revoked while published, nor by the
// retirement, nor when generation is switched on again.
func TestTheOperatorsCopyHoldingACredentialOfTheBucket(t *testing.T) {
	t.Run("the recorded one", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("mem", nil))
		f.mustReconcile()
		f.setOperatorData(f.mustSecret().Data) // the operator's secret holds cred-1 too
		f.configure(nil)
		f.mustReconcile()
		f.configure(settings("mem", nil))
		f.mustReconcile()
		s := f.expectPublished("cred-2", "mem")
		if _, ok := s.Annotations[annotationPrevious]; ok {
			t.Fatalf("the operator's key is recorded for revocation: %v", s.Annotations)
		}
		expectValid(t, f.mem, "cred-1", "cred-2")
	})
	t.Run("another one", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("mem", nil))
		f.mustReconcile()
		other, err := f.mem.Issuer().IssueCredential(f.ctx, genBucket, []string{"cred-1"})
		if err != nil {
			t.Fatal(err)
		}
		f.setOperatorData(other.Data) // the operator's secret holds the other key
		f.configure(nil)
		f.mustReconcile()
		f.events()

		// Two keys in use (cred-1 recorded, cred-2 the copy's): the new one waits for the
		// retirement's revocation of cred-1.
		f.configure(settings("mem", nil))
		f.mustReconcile()
		expectOperatorCopy2(t, f.mustSecret(), "cred-2")
		f.expectCondition(gardencorev1beta1.ConditionFalse, reasonResuming, true)
		expectValid(t, f.mem, "cred-1", "cred-2")
		f.expectEvents("Warning " + ReasonRotationWaiting)

		f.setSecretAnnotation(AnnotationRetireAfter, past())
		f.mustReconcile()
		s := f.expectPublished("cred-3", "mem")
		if _, ok := s.Annotations[annotationPrevious]; ok {
			t.Fatalf("the operator's key is recorded for revocation: %v", s.Annotations)
		}
		expectValid(t, f.mem, "cred-2", "cred-3")
	})
	t.Run("retired", func(t *testing.T) {
		f := newGenFixture(t, true)
		f.configure(settings("mem", nil))
		f.mustReconcile()
		f.setOperatorData(f.mustSecret().Data)
		f.configure(nil)
		f.mustReconcile()
		f.setSecretAnnotation(AnnotationRetireAfter, past())
		f.mustReconcile()
		f.expectCondition(gardencorev1beta1.ConditionFalse, "Retired", true)
		expectValid(t, f.mem, "cred-1") // the copy's key: not revoked, nor said to be
		for _, e := range f.events() {
			if strings.Contains(e, ReasonCredentialRevoked) {
				t.Fatalf("event %q", e)
			}
		}
		// Switched on after the retirement: the new credential does not invalidate the copy's.
		f.configure(settings("mem", nil))
		f.mustReconcile()
		f.expectPublished("cred-2", "mem")
		expectValid(t, f.mem, "cred-1", "cred-2")
	})
}

func expectOperatorCopy2(t *testing.T, s *corev1.Secret, id string) {
	t.Helper()
	if !hasAnnotation(s, AnnotationOperatorCopy) || string(s.Data[memstore.KeyCredential]) != id {
		t.Fatalf("the generated secret holds %q, annotations %v; want the operator's copy holding %s", s.Data[memstore.KeyCredential], s.Annotations, id)
	}
}
