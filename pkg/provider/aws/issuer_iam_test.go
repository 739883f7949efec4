// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

func TestIAMIssuerKeepsOneUserPerBucketWithTwoKeysAtMost(t *testing.T) {
	ctx := context.Background()
	stand := awsstack.StartIAM()
	defer stand.Close()
	cfg := &awsapi.BackupBucketConfig{GeneratedCredentials: &awsapi.GeneratedCredentialsConfig{Issuer: awsapi.IssuerIAM}}
	// A workload identity's keys in the operator's secret must not reach the generated one.
	operator := stack.With(minio.SecretData(), "roleARN", "arn:aws:iam::000000000000:role/operator", "token", "operator-token")
	iss := newIssuer(t, &awsprovider.Provider{IAMEndpoint: stand.URL}, operator, cfg, awsapi.IssuerIAM)
	const bucket = "8b6b9d0e-seed"
	user := awsprovider.IAMUserName(bucket)

	first, err := iss.IssueCredential(ctx, bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	policies, keys, _ := stand.User(user)
	var doc struct {
		Statement []struct {
			Resource []string
			Action   []string
		}
	}
	if err := json.Unmarshal([]byte(policies["etcd-backup-bucket"]), &doc); err != nil || len(doc.Statement) != 2 {
		t.Fatalf("policy %q: %v", policies["etcd-backup-bucket"], err)
	}
	if r := doc.Statement[0].Resource; !slices.Equal(r, []string{"arn:aws:s3:::" + bucket}) || !slices.Equal(doc.Statement[1].Resource, []string{"arn:aws:s3:::" + bucket + "/*"}) {
		t.Fatalf("policy resources %v, %v; want the bucket and its objects only", r, doc.Statement[1].Resource)
	}
	if slices.Contains(doc.Statement[0].Action, "s3:DeleteBucket") || slices.Contains(doc.Statement[0].Action, "s3:*") {
		t.Fatalf("policy grants %v on the bucket", doc.Statement[0].Action)
	}
	if !slices.Equal(keys, []string{first.ID}) || string(first.Data["accessKeyID"]) != first.ID || string(first.Data["endpoint"]) != minio.Endpoint {
		t.Fatalf("keys %v, credential %s; want the one issued, with the secret's other keys", keys, first.ID)
	}
	var dataKeys []string
	for k := range first.Data {
		dataKeys = append(dataKeys, k)
	}
	slices.Sort(dataKeys)
	if want := []string{"accessKeyID", "endpoint", "region", "s3ForcePathStyle", "secretAccessKey"}; !slices.Equal(dataKeys, want) {
		t.Fatalf("generated credential keys %v; want %v (nothing of the operator's own credentials)", dataKeys, want)
	}

	// Rotation: a second key beside the published one.
	second, err := iss.IssueCredential(ctx, bucket, []string{first.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, keys, _ = stand.User(user); !slices.Equal(keys, []string{first.ID, second.ID}) {
		t.Fatalf("keys %v; want the previous and the new", keys)
	}
	// A pass that issued but did not publish: the next issuance replaces the unpublished key.
	if err := iss.RevokeCredentials(ctx, bucket, []string{second.ID}); err != nil {
		t.Fatal(err)
	}
	lost, err := iss.IssueCredential(ctx, bucket, []string{second.ID})
	if err != nil {
		t.Fatal(err)
	}
	third, err := iss.IssueCredential(ctx, bucket, []string{second.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, keys, _ = stand.User(user); !slices.Equal(keys, []string{second.ID, third.ID}) || slices.Contains(keys, lost.ID) {
		t.Fatalf("keys %v; want the published and the latest, the unpublished %s gone", keys, lost.ID)
	}
	// Bucket deletion: keys, policy and user go.
	if err := iss.RevokeCredentials(ctx, bucket, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := stand.User(user); ok {
		t.Fatal("the IAM user survived the revocation of everything")
	}
	if err := iss.RevokeCredentials(ctx, bucket, nil); err != nil {
		t.Fatalf("revoking again: %v", err)
	}
}

func TestRetiringRevokesThroughTheRecordedIssuer(t *testing.T) {
	// Generation switched off: the issuer the generated secret recorded (IAM) is built to revoke
	// from a config that asks for no generated credentials.
	ctx := context.Background()
	stand := awsstack.StartIAM()
	defer stand.Close()
	p := &awsprovider.Provider{IAMEndpoint: stand.URL}
	const bucket = "8b6b9d0e-retired"
	on := &awsapi.BackupBucketConfig{GeneratedCredentials: &awsapi.GeneratedCredentialsConfig{Issuer: awsapi.IssuerIAM}}
	if _, err := newIssuer(t, p, minio.SecretData(), on, awsapi.IssuerIAM).IssueCredential(ctx, bucket, nil); err != nil {
		t.Fatal(err)
	}
	aws := minio.SecretData()
	delete(aws, "endpoint")
	off := &awsapi.BackupBucketConfig{}
	plain := newStoreWith(t, p, aws, off)
	if _, issues := plain.Management.(objectstore.CredentialIssuer); issues {
		t.Fatal("a store whose config asks for no generated credentials issues them")
	}
	if err := newIssuer(t, p, aws, off, awsapi.IssuerIAM).RevokeCredentials(ctx, bucket, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := stand.User(awsprovider.IAMUserName(bucket)); ok {
		t.Fatal("the retired bucket's IAM user is still there")
	}
}

func TestIAMUserOfSomebodyElseIsNotTakenOver(t *testing.T) {
	ctx := context.Background()
	stand := awsstack.StartIAM()
	defer stand.Close()
	const bucket = "8b6b9d0e-foreign"
	user := awsprovider.IAMUserName(bucket)
	stand.CreateUser(user) // not tagged managed-by=gardener-extension-backup
	cfg := &awsapi.BackupBucketConfig{GeneratedCredentials: &awsapi.GeneratedCredentialsConfig{Issuer: awsapi.IssuerIAM}}
	iss := newIssuer(t, &awsprovider.Provider{IAMEndpoint: stand.URL}, minio.SecretData(), cfg, awsapi.IssuerIAM)
	if _, err := iss.IssueCredential(ctx, bucket, nil); !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("got %v; want ErrOwnedByOther", err)
	}
	if err := iss.RevokeCredentials(ctx, bucket, nil); err != nil {
		t.Fatal(err)
	}
	if policies, keys, ok := stand.User(user); !ok || len(policies) != 0 || len(keys) != 0 {
		t.Fatalf("somebody else's IAM user was changed: exists %v, policies %v, keys %v", ok, policies, keys)
	}
}
