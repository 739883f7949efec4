// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestCopyBucket: the copy bucket a bucket's config declares is converged with the copy's
// credentials (ref-<credentialsRef> in the garden namespace), CopyBucketReady says whether it is;
// a missing secret is a False condition, never the primary's failure; a copy bucket that still
// holds objects outlives the BackupBucket's deletion, an empty one is deleted with it.
func TestCopyBucket(t *testing.T) {
	for _, leftInCopy := range []bool{false, true} {
		name := "empty copy deleted"
		if leftInCopy {
			name = "copy with objects kept"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			k8s := clientWithStatus(t)
			cfg := controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy"}}}
			bb := createBucket(t, k8s, cfg)
			mem := controllertest.Bucket(t, "bucket")
			recorder := events.NewFakeRecorder(20)
			a := newActuator(k8s, mem, recorder)
			reconcile := func() *gardencorev1beta1.Condition {
				t.Helper()
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
					t.Fatal(err)
				}
				if err := a.Reconcile(ctx, logr.Discard(), bb); err != nil {
					t.Fatalf("Reconcile: %v; the copy must not fail the primary", err)
				}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
					t.Fatal(err)
				}
				return v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionCopyBucketReady)
			}
			if c := reconcile(); c == nil || c.Status != gardencorev1beta1.ConditionFalse || c.Reason != backupbucket.ReasonCopyCredentialsErr || !strings.Contains(c.Message, `"bucket-copy"`) || !strings.Contains(c.Message, "garden/ref-backup-copy") {
				t.Fatalf("condition %v without the copy's secret; want False CopyCredentialsMissing naming the bucket and the secret", c)
			}
			if err := mem.Probe(ctx, "bucket-copy"); !errors.Is(err, objectstore.ErrBucketNotFound) {
				t.Fatalf("copy bucket without credentials: %v; want none", err)
			}
			createCopySecret(t, k8s)
			if c := reconcile(); c == nil || c.Status != gardencorev1beta1.ConditionTrue || c.Reason != backupbucket.ReasonCopyBucketReady {
				t.Fatalf("condition %v; want True", c)
			}
			if err := mem.Probe(ctx, "bucket-copy"); err != nil {
				t.Fatalf("copy bucket: %v", err)
			}
			if leftInCopy {
				if err := mem.PutObject(ctx, "bucket-copy", "shoot--a--b--1/Full-00000000-00000001-1", []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Delete(ctx, logr.Discard(), bb); err != nil {
				t.Fatalf("Delete: %v; the copy must not hold up the primary's deletion", err)
			}
			if err := mem.Probe(ctx, "bucket"); !errors.Is(err, objectstore.ErrBucketNotFound) {
				t.Fatalf("primary: %v; want deleted", err)
			}
			err := mem.Probe(ctx, "bucket-copy")
			events := drain(recorder)
			switch {
			case leftInCopy && err != nil:
				t.Fatalf("copy bucket holding objects: %v; want kept", err)
			case leftInCopy && !strings.Contains(events, backupbucket.ReasonCopyBucketKept) || leftInCopy && !strings.Contains(events, "shoot--a--b--1/Full-00000000-00000001-1"):
				t.Fatalf("events %q; want CopyBucketKept naming what is left", events)
			case !leftInCopy && !errors.Is(err, objectstore.ErrBucketNotFound):
				t.Fatalf("empty copy bucket: %v; want deleted", err)
			case !leftInCopy && !strings.Contains(events, backupbucket.ReasonCopyBucketDeleted):
				t.Fatalf("events %q; want CopyBucketDeleted", events)
			}
		})
	}
}

// drain returns the events recorded so far, one per line.
func drain(r *events.FakeRecorder) string {
	var b strings.Builder
	for {
		select {
		case e := <-r.Events:
			b.WriteString(e + "\n")
		default:
			return b.String()
		}
	}
}

// TestCopyBucketRefusesThePrimary: a copy bucket named as the BackupBucket itself
// (copy.bucketName) is no second copy: CopyBucketReady is False with ERR_CONFIGURATION_PROBLEM
// naming the field, the primary's reconcile succeeds, and the BackupBucket's deletion does
// nothing to it as a copy (no CopyBucketKept, no CopyBucketDeleted).
func TestCopyBucketRefusesThePrimary(t *testing.T) {
	ctx := context.Background()
	k8s := clientWithStatus(t)
	cfg := controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy", BucketName: "bucket"}}}
	bb := createBucket(t, k8s, cfg)
	createCopySecret(t, k8s)
	mem := controllertest.Bucket(t, "bucket")
	recorder := events.NewFakeRecorder(20)
	a := newActuator(k8s, mem, recorder)
	if err := a.Reconcile(ctx, logr.Discard(), bb); err != nil {
		t.Fatalf("Reconcile: %v; the copy must not fail the primary", err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
		t.Fatal(err)
	}
	c := v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionCopyBucketReady)
	if c == nil || c.Status != gardencorev1beta1.ConditionFalse || c.Reason != backupbucket.ReasonCopyBucketInvalid ||
		!strings.Contains(c.Message, "copy.bucketName") || !strings.Contains(c.Message, string(gardencorev1beta1.ErrorConfigurationProblem)) {
		t.Fatalf("condition %+v; want False %s naming copy.bucketName and %s", c, backupbucket.ReasonCopyBucketInvalid, gardencorev1beta1.ErrorConfigurationProblem)
	}
	if evs := drain(recorder); !strings.Contains(evs, backupbucket.ReasonCopyBucketInvalid) {
		t.Fatalf("events %q; want a %s warning", evs, backupbucket.ReasonCopyBucketInvalid)
	}
	if err := a.Delete(ctx, logr.Discard(), bb); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if evs := drain(recorder); strings.Contains(evs, backupbucket.ReasonCopyBucketKept) || strings.Contains(evs, backupbucket.ReasonCopyBucketDeleted) {
		t.Fatalf("events %q; want the primary never handled as its own copy", evs)
	}
}

// TestCopyBucketOfATypeWithoutAStore: a copy.type the binary writes no copy of (say local, from a
// cloud binary) does not fail the primary's reconcile: CopyBucketReady is False with
// ERR_CONFIGURATION_PROBLEM naming copy.type, and a Warning event says so.
func TestCopyBucketOfATypeWithoutAStore(t *testing.T) {
	ctx := context.Background()
	k8s := clientWithStatus(t)
	cfg := controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{Type: "local", CredentialsRef: "backup-copy"}}}
	bb := createBucket(t, k8s, cfg)
	mem := controllertest.Bucket(t, "bucket")
	recorder := events.NewFakeRecorder(20)
	a := newActuator(k8s, mem, recorder)
	if err := a.Reconcile(ctx, logr.Discard(), bb); err != nil {
		t.Fatalf("Reconcile: %v; the copy must not fail the primary", err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
		t.Fatal(err)
	}
	c := v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionCopyBucketReady)
	if c == nil || c.Status != gardencorev1beta1.ConditionFalse || c.Reason != backupbucket.ReasonCopyBucketInvalid ||
		!strings.Contains(c.Message, `copy.type "local"`) || !strings.Contains(c.Message, string(gardencorev1beta1.ErrorConfigurationProblem)) {
		t.Fatalf("condition %+v; want False %s naming copy.type and %s", c, backupbucket.ReasonCopyBucketInvalid, gardencorev1beta1.ErrorConfigurationProblem)
	}
	if evs := drain(recorder); !strings.Contains(evs, backupbucket.ReasonCopyBucketInvalid) {
		t.Fatalf("events %q; want a %s warning", evs, backupbucket.ReasonCopyBucketInvalid)
	}
}
