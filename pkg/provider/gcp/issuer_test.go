// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
)

func generatingConfig() *gcpapi.BackupBucketConfig {
	return &gcpapi.BackupBucketConfig{GeneratedCredentials: &gcpapi.GeneratedCredentialsConfig{}}
}

// issuer is the bucket controller's issuer for a config with generated credentials, named by the
// config, from the operator's secret data.
func issuer(t *testing.T, data map[string][]byte) objectstore.CredentialIssuer {
	t.Helper()
	cfg := generatingConfig()
	iss, err := testProvider.NewIssuer(context.Background(), provider.Credentials{Data: data, Region: region}, cfg, cfg.GenerationSettings().Issuer)
	if err != nil {
		t.Fatal(err)
	}
	if iss == nil {
		t.Fatal("a config with generatedCredentials gets no issuer")
	}
	return iss
}

// issuingStore is the bucket controller's store for a config with generated credentials, and its
// issuer, from one secret.
func issuingStore(t *testing.T) (conformance.Stores, objectstore.CredentialIssuer) {
	t.Helper()
	data := gcs.SecretData()
	s := conformance.StoresFor(t, testProvider, provider.Credentials{Data: data, Region: region}, generatingConfig())
	return s, issuer(t, data)
}

func TestGeneratedServiceAccountKeys(t *testing.T) {
	s, iss := issuingStore(t)
	conformance.RunIssuer(t, conformance.IssuerHarness{
		Harness:  conformance.Harness{Store: s, NewBucketName: newBucketName, Region: region},
		Issuer:   iss,
		StoreFor: func(t *testing.T, data map[string][]byte) conformance.Stores { return newStore(t, data) },
	})
}

func TestOneServiceAccountPerBucketBoundOnlyThere(t *testing.T) {
	ctx := context.Background()
	s, iss := issuingStore(t)
	bucket, other := newBucketName(), newBucketName()
	for _, b := range []string{bucket, other} {
		if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: b, Region: region}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := iss.IssueCredential(ctx, bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := iss.IssueCredential(ctx, bucket, []string{first.ID})
	if err != nil {
		t.Fatal(err)
	}
	email := gcpprovider.ServiceAccountID(bucket) + "@" + gcs.ProjectID + ".iam.gserviceaccount.com"
	if got := gcs.ServiceAccountKeyIDs(email); !slices.Equal(got, []string{first.ID, second.ID}) {
		t.Fatalf("keys %v; want the published and the previous one", got)
	}
	if got := gcs.BucketMembers(bucket, gcpprovider.BucketRole); !slices.Equal(got, []string{"serviceAccount:" + email}) {
		t.Fatalf("%s on the bucket: %v; want only the bucket's account", gcpprovider.BucketRole, got)
	}
	if got := gcs.BucketMembers(other, gcpprovider.BucketRole); len(got) != 0 {
		t.Fatalf("the account is bound on another bucket: %v", got)
	}
	// A rotation with nothing recorded (a failed pass): both unrecorded keys go, one is made.
	third, err := iss.IssueCredential(ctx, bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := gcs.ServiceAccountKeyIDs(email); !slices.Equal(got, []string{third.ID}) {
		t.Fatalf("keys %v; want only %s", got, third.ID)
	}
	// Revoking everything (bucket deletion) removes the binding and the account.
	if err := iss.RevokeCredentials(ctx, bucket, nil); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(gcs.ServiceAccountEmails(), email) || len(gcs.BucketMembers(bucket, gcpprovider.BucketRole)) != 0 {
		t.Fatalf("after revoking everything: accounts %v, bucket members %v", gcs.ServiceAccountEmails(), gcs.BucketMembers(bucket, gcpprovider.BucketRole))
	}
	// Revoking the credentials of a bucket that is gone with its account is done already.
	if err := iss.RevokeCredentials(ctx, "gone-"+bucket, nil); err != nil {
		t.Fatalf("revoking the credentials of a bucket without any: %v", err)
	}
	if len(gcs.Requests("/v1/projects/"+gcs.ProjectID+"/serviceAccounts")) == 0 {
		t.Fatal("no IAM API request was recorded")
	}
}

func TestServiceAccountOfSomebodyElseIsNotTakenOver(t *testing.T) {
	ctx := context.Background()
	s, iss := issuingStore(t)
	bucket := newBucketName()
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: bucket, Region: region}); err != nil {
		t.Fatal(err)
	}
	gcs.CreateServiceAccount(gcpprovider.ServiceAccountID(bucket), "somebody's deployment bot")
	_, err := iss.IssueCredential(ctx, bucket, nil)
	if !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("got %v; want ErrOwnedByOther", err)
	}
	if len(gcs.BucketMembers(bucket, gcpprovider.BucketRole)) != 0 {
		t.Fatal("somebody else's service account was bound on the bucket")
	}
	// Revoking the bucket's credentials (its deletion) leaves that account alone.
	if err := iss.RevokeCredentials(ctx, bucket, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(gcs.ServiceAccountEmails(), gcpprovider.ServiceAccountID(bucket)+"@"+gcs.ProjectID+".iam.gserviceaccount.com") {
		t.Fatal("revoking the bucket's credentials deleted somebody else's service account")
	}
}
