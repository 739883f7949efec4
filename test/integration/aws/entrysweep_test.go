// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// entryPrincipals lists what MinIO holds for bucket's entries: the descriptions of the parent's
// service accounts, and "user" / "policy" while the parent and its policy exist.
func entryPrincipals(t *testing.T, bucket string) []string {
	t.Helper()
	out, err := minio.Leftovers(framework.Ctx(t), awsprovider.MinIOEntryParent(bucket), "gardener-backup-entries-"+bucket)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// liveAndForceDeletedEntry creates a live entry of bucket with entryCredentials by MinIO and
// waits for it, and leaves a service account of an entry that does not exist (shoot--gone--1),
// issued as the entry controller issues it: what a force-deleted entry leaves behind. It returns
// the live entry, the MinIO entry issuer and the gone entry's prefix.
func liveAndForceDeletedEntry(t *testing.T, bucket string, operator map[string][]byte, shootPrefix string) (*extensionsv1alpha1.BackupEntry, objectstore.EntryCredentialIssuer, objectstore.Prefix) {
	t.Helper()
	ctx := framework.Ctx(t)
	entry := framework.UniqueName(shootPrefix) + "--1"
	env.EnsureNamespace(t, strings.TrimSuffix(entry, "--1"))
	be := env.CreateEntryWithConfig(t, entry, bucket, operator, entryCredentialsConfig)
	env.WaitFor(t, be, 2*time.Minute, "entry reconciled", framework.Succeeded)
	issuer, err := (&awsprovider.Provider{}).NewEntryIssuer(ctx, provider.Credentials{Data: operator, Region: region}, &awsapi.BackupBucketConfig{}, awsapi.IssuerMinIO)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := objectstore.EntryPrefix("shoot--gone--1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := issuer.IssueEntryCredential(ctx, bucket, gone, objectstore.EntryReadWrite, nil); err != nil {
		t.Fatal(err)
	}
	return be, issuer, gone
}

// TestEntryPrincipalsLeaveWithTheBucket: with entryCredentials by MinIO, the bucket records its
// entry issuer; an entry deleted as gardener does revokes its own service account but leaves the
// bucket's parent user and policy; a force-deleted entry's service account (issued here as the
// entry controller issues it, for an entry that no longer exists) is left too. Deleting the
// bucket removes all of it, and a neighbour bucket's principals stay.
func TestEntryPrincipalsLeaveWithTheBucket(t *testing.T) {
	ctx := context.Background()
	operator := secretData(minio.Endpoint)
	bb := env.CreateBucket(t, framework.UniqueName("sweep-"), operator, entryCredentialsConfig)
	neighbour := env.CreateBucket(t, bb.Name+"x", operator, entryCredentialsConfig)
	for _, b := range []*extensionsv1alpha1.BackupBucket{bb, neighbour} {
		env.WaitFor(t, b, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	}
	current := &extensionsv1alpha1.BackupBucket{}
	if err := env.K8s.Get(ctx, client.ObjectKeyFromObject(bb), current); err != nil {
		t.Fatal(err)
	}
	var record map[string][]string
	if err := json.Unmarshal([]byte(current.Annotations[backupbucket.AnnotationEntryIssuers]), &record); err != nil || len(record["MinIO"]) != 1 {
		t.Fatalf("annotation %s = %q; want the MinIO entry issuer recorded with its place", backupbucket.AnnotationEntryIssuers, current.Annotations[backupbucket.AnnotationEntryIssuers])
	}

	be, issuer, gone := liveAndForceDeletedEntry(t, bb.Name, operator, "shoot--s--")
	if _, err := issuer.IssueEntryCredential(ctx, neighbour.Name, gone, objectstore.EntryReadWrite, nil); err != nil {
		t.Fatal(err)
	}

	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	left := entryPrincipals(t, bb.Name)
	if want := []string{"gardener-extension-backup bucket=" + bb.Name + " prefix=shoot--gone--1/ access=read-write", "policy", "user"}; !slices.Equal(left, want) {
		t.Fatalf("after the entry's deletion: %q; want only the force-deleted entry's and the parent: %q", left, want)
	}

	env.DeleteAndWaitGone(t, bb, 2*time.Minute)
	if left := entryPrincipals(t, bb.Name); len(left) != 0 {
		t.Fatalf("after the bucket's deletion: %q left; want nothing", left)
	}
	if left := entryPrincipals(t, neighbour.Name); len(left) != 3 {
		t.Fatalf("neighbour bucket %s after the deletion of %s: %q; want its principal and parent untouched", neighbour.Name, bb.Name, left)
	}
	env.DeleteAndWaitGone(t, neighbour, 2*time.Minute)
	if left := entryPrincipals(t, neighbour.Name); len(left) != 0 {
		t.Fatalf("after the neighbour's deletion: %q left; want nothing", left)
	}
}

// setConfig patches obj's providerConfig (a spec change: the next Succeeded is of it) and
// requests a reconcile.
func setConfig(t *testing.T, obj client.Object, spec *extensionsv1alpha1.DefaultSpec, providerConfig string) {
	t.Helper()
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(providerConfig)}
	if err := env.K8s.Patch(framework.Ctx(t), obj, patch); err != nil {
		t.Fatal(err)
	}
	env.Trigger(t, obj)
}

// TestEntryPrincipalsSweptAfterASwitchOff: entryCredentials switched off on the bucket; its
// reconcile sweeps a force-deleted entry's service account at once and keeps the live entry's
// (and the parent); the entry, switched off too (gardenlet copies the bucket's providerConfig),
// revokes its own; the bucket's next reconcile removes the parent and its policy and drops the
// record.
func TestEntryPrincipalsSweptAfterASwitchOff(t *testing.T) {
	operator := secretData(minio.Endpoint)
	bb := env.CreateBucket(t, framework.UniqueName("sweepoff-"), operator, entryCredentialsConfig)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	be, _, _ := liveAndForceDeletedEntry(t, bb.Name, operator, "shoot--f--")
	mark := "gardener-extension-backup bucket=" + bb.Name + " prefix="

	setConfig(t, bb, &bb.Spec.DefaultSpec, minioConfig)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled switched off", framework.Succeeded)
	if left, want := entryPrincipals(t, bb.Name), []string{mark + be.Name + "/ access=read-write", "policy", "user"}; !slices.Equal(left, want) {
		t.Fatalf("after the bucket's switch-off: %q; want the live entry's and the parent only: %q", left, want)
	}
	if bb.Annotations[backupbucket.AnnotationEntryIssuers] == "" {
		t.Fatal("the record was dropped while the live entry's principal is left")
	}

	setConfig(t, be, &be.Spec.DefaultSpec, minioConfig)
	env.WaitFor(t, be, 2*time.Minute, "entry reconciled switched off", framework.Succeeded)
	env.Trigger(t, bb)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled again", framework.SucceededAfter(time.Now()))
	if left := entryPrincipals(t, bb.Name); len(left) != 0 {
		t.Fatalf("after the entry's switch-off and the bucket's reconcile: %q left; want nothing", left)
	}
	if got := bb.Annotations[backupbucket.AnnotationEntryIssuers]; got != "" {
		t.Fatalf("record %q kept with nothing left", got)
	}
	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	env.DeleteAndWaitGone(t, bb, 2*time.Minute)
}
