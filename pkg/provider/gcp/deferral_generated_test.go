// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	gcsiam "cloud.google.com/go/iam"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

// generatedEntry makes a bucket with a retention policy of a day and generated credentials,
// reconciled with the operator's credentials, and returns the operator's store, the store of the
// bucket's generated credentials (all a source- entry on the destination seed has) and the bucket.
func generatedEntry(t *testing.T) (conformance.Stores, conformance.Stores, string) {
	t.Helper()
	ctx := ctxFor(t)
	s, iss := issuingStore(t)
	bucket := newBucketName()
	cfg := generatingConfig()
	cfg.Immutability = immutable(24*time.Hour, false).Immutability
	if err := ensure(t, s, bucket, cfg); err != nil {
		t.Fatal(err)
	}
	cred, err := iss.IssueCredential(ctx, bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	entry := newStore(t, cred.Data)
	for _, k := range []string{entryA + "etcd-main/v2/Full-1", entryA + "etcd-main/v2/Incr-2", entryB + "etcd-main/v2/Full-1"} {
		if err := entry.PutObject(ctx, bucket, k, []byte("data of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	return s, entry, bucket
}

// TestSourceEntryDefersWithGeneratedCredentials (issue 25, finding 4): a migration's source-
// entry lives on the destination seed with the bucket's generated credentials only, and no
// BackupBucket there to fall back to. Its deletion meets locked objects; the deferral completes
// with those credentials (it marks and reads the bucket's rule back), and the rule deletes exactly
// the entry's objects once their retention ends.
func TestSourceEntryDefersWithGeneratedCredentials(t *testing.T) {
	ctx := ctxFor(t)
	_, entry, bucket := generatedEntry(t)
	c := rawClient(t, gcs.SecretData())
	otherBefore := generations(t, c, bucket, entryB)
	prefix, _ := objectstore.EntryPrefix(strings.TrimSuffix(entryA, "/"))
	if res, err := objectstore.DeletePrefix(ctx, entry, bucket, prefix, objectstore.DeleteOptions{}); err != nil || !res.Done || res.Locked != 2 {
		t.Fatalf("DeletePrefix = %+v, %v; want done with 2 locked", res, err)
	}
	d, err := entry.DeferDeletion(ctx, bucket, entryA)
	if err != nil {
		t.Fatalf("DeferDeletion with the generated credentials: %v; want it to complete", err)
	}
	if !strings.Contains(d.Rule, "daysSinceCustomTime 1") {
		t.Fatalf("Deferral.Rule %q does not name the rule", d.Rule)
	}
	if err := deferralCovers(c)(ctx, bucket, entryA); err != nil {
		t.Fatal(err)
	}
	if _, err := gcs.RunLifecycle(bucket, time.Now().Add(49*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if left := generations(t, c, bucket, entryA); len(left) != 0 {
		t.Fatalf("the rule left %v of the deferred entry", left)
	}
	if got := generations(t, c, bucket, entryB); !slices.Equal(got, otherBefore) {
		t.Fatalf("the other entry changed: %v; want %v", got, otherBefore)
	}
}

// TestGeneratedAccountWithoutReaderRole: an account issued by an earlier version has
// roles/storage.objectAdmin alone; its deferral cannot read the rule back and says what to do,
// and the bucket's reconcile grants the missing role, after which the deferral completes.
func TestGeneratedAccountWithoutReaderRole(t *testing.T) {
	ctx := ctxFor(t)
	s, entry, bucket := generatedEntry(t)
	email := gcpprovider.ServiceAccountID(bucket) + "@" + gcs.ProjectID + ".iam.gserviceaccount.com"
	h := rawClient(t, gcs.SecretData()).Bucket(bucket).IAM()
	policy, err := h.Policy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	policy.Remove("serviceAccount:"+email, gcsiam.RoleName(gcpprovider.ReaderRole))
	if err := h.SetPolicy(ctx, policy); err != nil {
		t.Fatal(err)
	}
	_, err = entry.DeferDeletion(ctx, bucket, entryA)
	var forbidden *gcpprovider.ForbiddenReadError
	if !errors.As(err, &forbidden) || !errors.Is(err, objectstore.ErrForbidden) || !strings.Contains(err.Error(), "reconcile the BackupBucket") {
		t.Fatalf("DeferDeletion without %s = %v; want a ForbiddenReadError (ErrForbidden) saying what to do", gcpprovider.ReaderRole, err)
	}
	cfg := generatingConfig()
	cfg.Immutability = immutable(24*time.Hour, false).Immutability
	if err := ensure(t, s, bucket, cfg); err != nil {
		t.Fatal(err)
	}
	if got := gcs.BucketMembers(bucket, gcpprovider.ReaderRole); !slices.Equal(got, []string{"serviceAccount:" + email}) {
		t.Fatalf("%s after the bucket's reconcile: %v; want the bucket's account", gcpprovider.ReaderRole, got)
	}
	if _, err := entry.DeferDeletion(ctx, bucket, entryA); err != nil {
		t.Fatalf("DeferDeletion after the reconcile granted the role: %v", err)
	}
}

// TestGeneratedCredentialsDoNotWriteAMissingRule: on a bucket whose rule is missing (not
// reconciled since), generated credentials may not write it: the deferral is refused as
// forbidden, says whose reconcile puts it there, and marks nothing as done.
func TestGeneratedCredentialsDoNotWriteAMissingRule(t *testing.T) {
	_, entry, bucket := generatedEntry(t)
	setRules(bucket, `{"action":{"type":"AbortIncompleteMultipartUpload"},"condition":{"age":7}}`)
	_, err := entry.DeferDeletion(context.Background(), bucket, entryA)
	var missing *objectstore.RuleMissingError
	if !errors.As(err, &missing) || !errors.Is(err, objectstore.ErrForbidden) || !strings.Contains(err.Error(), "reconcile the BackupBucket") {
		t.Fatalf("DeferDeletion on a bucket without its rule = %v; want a RuleMissingError (ErrForbidden)", err)
	}
}
