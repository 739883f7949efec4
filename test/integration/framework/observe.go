// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
)

// Availability describes a provider's bucket for AvailabilityFlow.
type Availability struct {
	// Operator is the operator's credentials secret data.
	Operator map[string][]byte
	// Config is the BackupBucket's providerConfig; with Generated, one that asks for generated
	// credentials.
	Config    string
	Generated bool
	// NoRevocation, when set, is why the provider's stand-in cannot refuse revoked generated
	// credentials: the flow then skips the revocation step (and its False condition) and only
	// checks that a rotation keeps the generated credentials available.
	NoRevocation string
	// Delete, when set, deletes the bucket behind the extension's back instead of the operator's
	// store's DeleteBucket (for example only the container, where that deletes a whole account).
	Delete func(t *testing.T, bucket string)
}

// AvailabilityFlow checks the BucketAvailable condition against what happens behind the
// extension's back: True once the bucket is reconciled; False (BucketNotFound) when the bucket is
// deleted, True again after gardenlet's next reconcile recreates it; and, with generated
// credentials, False (naming the generated secret) when they are revoked, True again after a
// rotation publishes new ones.
func (e *Env) AvailabilityFlow(t *testing.T, a Availability) {
	t.Helper()
	bb := e.CreateBucket(t, UniqueName("avail-"), a.Operator, a.Config)
	e.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", Succeeded)
	e.WaitFor(t, bb, time.Minute, "bucket available", Available(gardencorev1beta1.ConditionTrue, "Available", ""))
	store, issuer := e.BucketStoreFor(t, a.Operator, a.Config)

	if a.Delete != nil {
		a.Delete(t, bb.Name)
	} else if err := store.DeleteBucket(Ctx(t), bb.Name); err != nil {
		t.Fatalf("deleting the bucket behind the extension's back: %v", err)
	}
	e.WaitFor(t, bb, time.Minute, "bucket unavailable", Available(gardencorev1beta1.ConditionFalse, "BucketNotFound", ""))
	if !e.EventuallyHasEvent(t, bb.Name, backupbucket.ReasonBucketUnavailable, bb.Name, 10*time.Second) {
		t.Errorf("no %s event", backupbucket.ReasonBucketUnavailable)
	}
	e.Trigger(t, bb) // gardenlet's next reconcile recreates it
	e.WaitFor(t, bb, time.Minute, "bucket available again", Available(gardencorev1beta1.ConditionTrue, "Available", ""))

	if a.Generated {
		generated := e.generated(t, bb.Name)
		if issuer == nil {
			t.Fatal("the operator's credentials issue no credentials")
		}
		if a.NoRevocation != "" {
			t.Logf("skipping the revocation step: %s", a.NoRevocation)
		} else {
			if err := issuer.RevokeCredentials(Ctx(t), bb.Name, nil); err != nil {
				t.Fatalf("revoking the generated credentials behind the extension's back: %v", err)
			}
			e.WaitFor(t, bb, time.Minute, "generated credentials refused", Available(gardencorev1beta1.ConditionFalse, "", generated.Name))
		}
		e.Trigger(t, bb, backupbucket.AnnotationRotateCredentials, "after-revocation")
		e.WaitFor(t, bb, time.Minute, "available with new generated credentials", Available(gardencorev1beta1.ConditionTrue, "Available", "generated credentials"))
	}
	e.DeleteAndWaitGone(t, bb, 2*time.Minute)
}

// Available returns a check of a bucket's BucketAvailable condition: its status, and its reason
// and a part of its message where not empty.
func Available(status gardencorev1beta1.ConditionStatus, reason, message string) func(extensionsv1alpha1.Object) bool {
	return func(obj extensionsv1alpha1.Object) bool {
		bb, ok := obj.(*extensionsv1alpha1.BackupBucket)
		if !ok {
			return false
		}
		c := v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionBucketAvailable)
		return c != nil && c.Status == status && (reason == "" || c.Reason == reason) && strings.Contains(c.Message, message)
	}
}
