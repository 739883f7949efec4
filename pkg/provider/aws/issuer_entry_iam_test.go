// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// startEnforcedIAM starts the IAM stand-in with its keys and policies mirrored onto MinIO, so
// that the issuer's proof and the tests' requests meet a real policy engine.
func startEnforcedIAM(t *testing.T) *awsstack.IAM {
	t.Helper()
	stand := awsstack.StartIAM()
	t.Cleanup(stand.Close)
	if err := stand.EnforceOn(minio); err != nil {
		t.Fatal(err)
	}
	return stand
}

// startIAMIssuer starts the enforced IAM stand-in and the IAM entry issuer of the operator's
// secret on it.
func startIAMIssuer(t *testing.T) (*awsstack.IAM, objectstore.EntryCredentialIssuer) {
	t.Helper()
	stand := startEnforcedIAM(t)
	return stand, newEntryIssuer(t, &awsprovider.Provider{IAMEndpoint: stand.URL}, minio.SecretData(), awsapi.IssuerIAM)
}

func TestIAMEntryIssuerUserPolicyAndKeys(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t)
	stand, iss := startIAMIssuer(t)
	user := awsprovider.IAMEntryUserName(f.bucket, f.ours, objectstore.EntryReadWrite)

	first := f.issue(t, iss)
	policies, keys, _ := stand.User(user)
	doc := policies["etcd-backup-entry"]
	if len(doc) > 2048 || !strings.Contains(doc, `"arn:aws:s3:::`+f.bucket+`/shoot--p--uid1/*"`) || strings.Contains(doc, `"arn:aws:s3:::`+f.bucket+`/*"`) {
		t.Fatalf("policy (%d characters) %s; want the entry's prefix with its slash, never the whole bucket's objects", len(doc), doc)
	}
	var parsed struct {
		Statement []struct {
			Condition map[string]map[string][]string
		}
	}
	if err := json.Unmarshal([]byte(doc), &parsed); err != nil || !slices.Equal(parsed.Statement[0].Condition["StringLike"]["s3:prefix"], []string{"shoot--p--uid1/", "shoot--p--uid1/*"}) {
		t.Fatalf("listing condition %+v (%v); want s3:prefix under the entry's prefix only", parsed, err)
	}
	if tags := stand.Tags(user); tags["gardener-backup-bucket"] != f.bucket || tags["gardener-backup-prefix"] != "shoot--p--uid1/" || tags["gardener-backup-access"] != "read-write" || tags["managed-by"] != "gardener-extension-backup" {
		t.Fatalf("tags %v; want the bucket, prefix, access and the extension's mark", tags)
	}
	if !slices.Equal(keys, []string{first.ID}) {
		t.Fatalf("keys %v; want %s", keys, first.ID)
	}
	c := s3Of(t, first.Data)
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: &f.oursKey}); err != nil {
		t.Fatalf("the issued key cannot read its prefix: %v", err)
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: &f.siblingKey}); errorCode(err) != "AccessDenied" {
		t.Fatalf("the issued key reading the sibling: %v; want AccessDenied", err)
	}
	if _, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &f.bucket}); errorCode(err) != "AccessDenied" {
		t.Fatalf("the issued key listing the bucket: %v; want AccessDenied", err)
	}

	if ok, err := iss.Owns(ctx, f.bucket, f.ours, objectstore.EntryReadWrite, first.ID); err != nil || !ok {
		t.Fatalf("Owns of the issued key: %v, %v", ok, err)
	}
	if ok, err := iss.Owns(ctx, f.bucket, f.ours, objectstore.EntryReadOnly, first.ID); err != nil || ok {
		t.Fatalf("Owns of the key for the other access: %v, %v", ok, err)
	}

	// A retiring key stays through an issuance; with two keys, IAM's limit, a third waits.
	f.retire(t, iss, time.Now().Add(time.Hour), first.ID)
	second := f.issue(t, iss)
	if _, keys, _ = stand.User(user); !slices.Equal(keys, []string{first.ID, second.ID}) {
		t.Fatalf("keys %v; want the retiring and the new", keys)
	}
	if _, err := iss.IssueEntryCredential(ctx, f.bucket, f.ours, objectstore.EntryReadWrite, []string{first.ID, second.ID}); !errors.Is(err, objectstore.ErrQuotaExceeded) || !strings.Contains(err.Error(), first.ID) {
		t.Fatalf("a third key beside two in use: %v; want ErrQuotaExceeded naming them", err)
	}
	// Revocation of all but the published: the retiring key and its tag go.
	if err := iss.RevokeEntryCredentials(ctx, f.bucket, f.ours, objectstore.EntryReadWrite, []string{second.ID}); err != nil {
		t.Fatal(err)
	}
	if _, keys, _ = stand.User(user); !slices.Equal(keys, []string{second.ID}) || stand.Tags(user)["retire-"+first.ID] != "" {
		t.Fatalf("keys %v, tags %v; want only the published key, no retirement tag", keys, stand.Tags(user))
	}
	if _, err := s3Of(t, first.Data).GetObject(ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: &f.oursKey}); err == nil {
		t.Fatal("the revoked key still reads")
	}
	// Everything: the user goes; a user of the read-only access is another user.
	if err := iss.RevokeEntryCredentials(ctx, f.bucket, f.ours, objectstore.EntryReadWrite, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := stand.User(user); ok {
		t.Fatal("the entry's IAM user survived the revocation of everything")
	}
	if awsprovider.IAMEntryUserName(f.bucket, f.ours, objectstore.EntryReadOnly) == user || awsprovider.IAMEntryUserName(f.bucket, f.sibling, objectstore.EntryReadWrite) == user {
		t.Fatal("two entries or accesses share an IAM user")
	}
}

func TestIAMEntryIssuerAtTheAccountsUserLimit(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t)
	stand := startEnforcedIAM(t)
	stand.SetUsersQuota(2)
	stand.CreateUser("someone-elses-user") // every user of the account counts, not only ours
	iss := newEntryIssuer(t, &awsprovider.Provider{IAMEndpoint: stand.URL}, minio.SecretData(), awsapi.IssuerIAM)
	wantHeadroom := func(used, limit int) {
		t.Helper()
		h, err := iss.Headroom(ctx)
		if err != nil || h.Used != used || h.Limit != limit || h.Unbounded || h.Left() != limit-used {
			t.Fatalf("Headroom = %+v (left %d), %v; want %d of %d used", h, h.Left(), err, used, limit)
		}
	}
	wantHeadroom(1, 2)
	f.issue(t, iss)
	wantHeadroom(2, 2)
	_, err := iss.IssueEntryCredential(ctx, f.bucket, f.sibling, objectstore.EntryReadWrite, nil)
	if !errors.Is(err, objectstore.ErrQuotaExceeded) || !strings.Contains(err.Error(), "5,000") || !strings.Contains(err.Error(), "entryCredentials off") {
		t.Fatalf("got %v; want ErrQuotaExceeded saying the limit and what to do", err)
	}
	// Headroom returns (the quota raised here; on AWS: users deleted): the next issuance works.
	stand.SetUsersQuota(3)
	wantHeadroom(2, 3)
	if _, err := iss.IssueEntryCredential(ctx, f.bucket, f.sibling, objectstore.EntryReadWrite, nil); err != nil {
		t.Fatalf("with headroom again: %v", err)
	}
	wantHeadroom(3, 3)
}

func TestMinIOEntryIssuerHeadroomIsUnbounded(t *testing.T) {
	iss := newEntryIssuer(t, &awsprovider.Provider{}, minio.SecretData(), awsapi.IssuerMinIO)
	if h, err := iss.Headroom(context.Background()); err != nil || !h.Unbounded || h.Limit != 0 {
		t.Fatalf("Headroom = %+v, %v; want Unbounded without an invented limit", h, err)
	}
}

func TestIAMEntryUserOfSomebodyElseIsNotTakenOver(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t)
	stand := startEnforcedIAM(t)
	user := awsprovider.IAMEntryUserName(f.bucket, f.ours, objectstore.EntryReadWrite)
	stand.CreateUser(user)
	iss := newEntryIssuer(t, &awsprovider.Provider{IAMEndpoint: stand.URL}, minio.SecretData(), awsapi.IssuerIAM)
	if _, err := iss.IssueEntryCredential(ctx, f.bucket, f.ours, objectstore.EntryReadWrite, nil); !errors.Is(err, objectstore.ErrOwnedByOther) {
		t.Fatalf("got %v; want ErrOwnedByOther", err)
	}
	if err := iss.RevokeEntryCredentials(ctx, f.bucket, f.ours, objectstore.EntryReadWrite, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := stand.User(user); !ok {
		t.Fatal("somebody else's IAM user was deleted")
	}
	if kept, err := iss.SweepEntryCredentials(ctx, f.bucket, objectstore.EntrySweep{}); err != nil || kept != 0 {
		t.Fatalf("sweep: kept %d, %v; want nothing of ours, no error", kept, err)
	}
	if _, _, ok := stand.User(user); !ok {
		t.Fatal("somebody else's IAM user was swept")
	}
}

// Both keys of an entry's user retiring (a migration within a rotation's grace, or there and
// back within the migration grace), none in use: the destination's first issuance ends the one
// retiring soonest and gets a credential, instead of waiting up to a grace for IAM's limit.
// It is the row of issue 44 finding 4 (failed with endSoonestRetiring's call removed).
func TestIAMEntryIssuanceWithTwoKeysRetiring(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t)
	stand, iss := startIAMIssuer(t)
	user := awsprovider.IAMEntryUserName(f.bucket, f.ours, objectstore.EntryReadWrite)
	rotatedOut := f.issue(t, iss)
	f.retire(t, iss, time.Now().Add(time.Hour), rotatedOut.ID)
	migrated := f.issue(t, iss)
	f.retire(t, iss, time.Now().Add(24*time.Hour), migrated.ID)
	destination, err := iss.IssueEntryCredential(ctx, f.bucket, f.ours, objectstore.EntryReadWrite, nil)
	if err != nil {
		t.Fatalf("the destination's first issuance with two keys retiring: %v; want a credential", err)
	}
	if _, keys, _ := stand.User(user); !slices.Equal(keys, []string{migrated.ID, destination.ID}) || stand.Tags(user)["retire-"+rotatedOut.ID] != "" {
		t.Fatalf("keys %v, tags %v; want the one retiring later and the new one, the sooner one ended with its tag", keys, stand.Tags(user))
	}
	if _, err := s3Of(t, destination.Data).GetObject(ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: &f.oursKey}); err != nil {
		t.Fatalf("the destination's credential cannot read its prefix: %v", err)
	}
}

// A retired key ends at its time: EndRetiredEntryCredentials reports when, spares it before, and
// deletes it (with its tag) after; S3 then refuses it.
func TestIAMEntryRetiredKeyEndsAtItsTime(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t)
	stand, iss := startIAMIssuer(t)
	user := awsprovider.IAMEntryUserName(f.bucket, f.ours, objectstore.EntryReadWrite)
	retired := f.issue(t, iss)
	published := f.issue(t, iss, retired.ID)
	at := time.Now().Add(5 * time.Second)
	f.retire(t, iss, at, retired.ID)
	next, err := iss.EndRetiredEntryCredentials(ctx, f.bucket, f.ours, objectstore.EntryReadWrite)
	if _, keys, _ := stand.User(user); err != nil || !next.Equal(at.Truncate(time.Second)) || !slices.Equal(keys, []string{retired.ID, published.ID}) {
		t.Fatalf("before its time: next %v, %v, keys %v; want %v, both keys", next, err, keys, at)
	}
	for !time.Now().After(next) {
		time.Sleep(100 * time.Millisecond)
	}
	next, err = iss.EndRetiredEntryCredentials(ctx, f.bucket, f.ours, objectstore.EntryReadWrite)
	if _, keys, _ := stand.User(user); err != nil || !next.IsZero() || !slices.Equal(keys, []string{published.ID}) || stand.Tags(user)["retire-"+retired.ID] != "" {
		t.Fatalf("after its time: next %v, %v, keys %v, tags %v; want none retiring, only %s, no tag", next, err, keys, stand.Tags(user), published.ID)
	}
	if _, err := s3Of(t, retired.Data).GetObject(ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: &f.oursKey}); err == nil {
		t.Fatal("the ended key still reads")
	}
}

// A pass ends only the keys due in its one listing: the key published just before, which IAM's
// eventually consistent listing does not show yet, stays.
func TestIAMEntryEndRetiredSparesTheKeyTheListingLagsOn(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t)
	stand, iss := startIAMIssuer(t)
	user := awsprovider.IAMEntryUserName(f.bucket, f.ours, objectstore.EntryReadWrite)
	retired := f.issue(t, iss)
	at := time.Now().Add(time.Second)
	f.retire(t, iss, at, retired.ID)
	published := f.issue(t, iss, retired.ID)
	for !time.Now().After(at.Truncate(time.Second)) {
		time.Sleep(100 * time.Millisecond)
	}
	stand.LagKeyListingOnce(user)
	next, err := iss.EndRetiredEntryCredentials(ctx, f.bucket, f.ours, objectstore.EntryReadWrite)
	if _, keys, _ := stand.User(user); err != nil || !next.IsZero() || !slices.Equal(keys, []string{published.ID}) || stand.Tags(user)["retire-"+retired.ID] != "" {
		t.Fatalf("next %v, %v, keys %v, tags %v; want only the published %s left, the retired one ended with its tag", next, err, keys, stand.Tags(user), published.ID)
	}
	if _, err := s3Of(t, published.Data).GetObject(ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: &f.oursKey}); err != nil {
		t.Fatalf("the published credential cannot read its prefix: %v", err)
	}
}
