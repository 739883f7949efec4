// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
)

// newEntryIssuer builds p's entry issuer named name from data, as the entry controller does.
func newEntryIssuer(t *testing.T, p *awsprovider.Provider, data map[string][]byte, name string) objectstore.EntryCredentialIssuer {
	t.Helper()
	i, err := p.NewEntryIssuer(context.Background(), provider.Credentials{Data: data, Region: "eu-central-1"}, &awsapi.BackupBucketConfig{}, name)
	if err != nil || i == nil {
		t.Fatalf("entry issuer %q: %v, %v", name, i, err)
	}
	return i
}

// s3Of is a plain SDK client with a credential's data.
func s3Of(t *testing.T, data map[string][]byte) *s3.Client {
	t.Helper()
	c, err := (&awsprovider.Provider{}).NewS3Client(provider.Credentials{Data: data, Region: "eu-central-1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func errorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// entryFixture is a versioned bucket with objects of three entries: ours (uid1), a sibling whose
// name starts with ours (uid10) and another.
type entryFixture struct {
	bucket               string
	ours, sibling, other objectstore.Prefix
	root                 *s3.Client
	oursKey, siblingKey  string
}

func newEntryFixture(t *testing.T) entryFixture {
	t.Helper()
	ctx := context.Background()
	f := entryFixture{bucket: newBucketName(), root: minio.S3Client()}
	var err error
	for p, name := range map[*objectstore.Prefix]string{&f.ours: "shoot--p--uid1", &f.sibling: "shoot--p--uid10", &f.other: "shoot--q--other"} {
		if *p, err = objectstore.EntryPrefix(name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.root.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &f.bucket, CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: "eu-central-1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.root.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &f.bucket, VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	f.oursKey, f.siblingKey = f.ours.String()+"etcd-main/v2/Full-1", f.sibling.String()+"etcd-main/v2/Full-1"
	for _, k := range []string{f.oursKey, f.siblingKey, f.other.String() + "etcd-main/v2/Full-1"} {
		f.put(t, f.root, k, nil)
	}
	return f
}

func (f entryFixture) put(t *testing.T, c *s3.Client, key string, want error) {
	t.Helper()
	_, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &f.bucket, Key: &key, Body: bytes.NewReader([]byte("snapshot of " + key))})
	if (err == nil) != (want == nil) {
		t.Fatalf("PutObject %s: %v", key, err)
	}
}

// issue issues ours' read-write credential with iss, the ids in use kept, and fails the test on
// an error.
func (f entryFixture) issue(t *testing.T, iss objectstore.EntryCredentialIssuer, inUse ...string) objectstore.Credential {
	t.Helper()
	cred, err := iss.IssueEntryCredential(context.Background(), f.bucket, f.ours, objectstore.EntryReadWrite, inUse)
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// retire retires ours' read-write credentials ids with iss, to end after at.
func (f entryFixture) retire(t *testing.T, iss objectstore.EntryCredentialIssuer, at time.Time, ids ...string) {
	t.Helper()
	if err := iss.RetireEntryCredentials(context.Background(), f.bucket, f.ours, objectstore.EntryReadWrite, ids, at); err != nil {
		t.Fatal(err)
	}
}

// exists says whether key is there, asked with the operator's credentials.
func (f entryFixture) exists(t *testing.T, key string) bool {
	t.Helper()
	_, err := f.root.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &f.bucket, Key: &key})
	return err == nil
}

// TestMinIOEntryCredentialReachesOnlyItsPrefix issues an entry's credential on real MinIO and
// sends every request that could leave the entry's prefix.
func TestMinIOEntryCredentialReachesOnlyItsPrefix(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t)
	iss := newEntryIssuer(t, &awsprovider.Provider{}, minio.SecretData(), awsapi.IssuerMinIO)
	cred := f.issue(t, iss)
	if iss.CredentialID(cred.Data) != cred.ID {
		t.Fatalf("CredentialID %q of the issued data; want %q", iss.CredentialID(cred.Data), cred.ID)
	}
	c := s3Of(t, cred.Data)
	b := aws.String(f.bucket)

	// What etcd-backup-restore does, under its prefix.
	f.put(t, c, f.ours.String()+"etcd-main/v2/Incr-2", nil)
	if out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: &f.oursKey}); err != nil {
		t.Fatalf("GetObject of its own: %v", err)
	} else {
		_, _ = io.Copy(io.Discard, out.Body)
		_ = out.Body.Close()
	}
	if _, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String(f.ours.String())}); err != nil {
		t.Fatalf("listing its own prefix: %v", err)
	}
	if _, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b, Prefix: aws.String(f.ours.String() + "etcd-main/")}); err != nil {
		t.Fatalf("listing versions under its own prefix: %v", err)
	}
	if _, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: b}); err != nil {
		t.Fatalf("GetBucketVersioning: %v", err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(f.ours.String() + "etcd-main/v2/Incr-2")}); err != nil {
		t.Fatalf("deleting its own (garbage collection): %v", err)
	}

	// Every escape is refused by the store's policy (AccessDenied, not a missing key).
	mine := f.ours.String() + "etcd-main/v2/mine"
	copySource := aws.String(f.bucket + "/" + f.siblingKey)
	escapes := []struct {
		name string
		do   func() error
	}{
		{"GetObject of the sibling uid10", func() error {
			_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: &f.siblingKey})
			return err
		}},
		{"GetObject of another entry", func() error {
			_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(f.other.String() + "etcd-main/v2/Full-1")})
			return err
		}},
		{"PutObject into the sibling", func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(f.sibling.String() + "x"), Body: bytes.NewReader([]byte("x"))})
			return err
		}},
		{"PutObject at the bucket's root", func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("shoot--p--uid1"), Body: bytes.NewReader([]byte("x"))})
			return err
		}},
		{"DeleteObject of the sibling", func() error {
			_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: &f.siblingKey})
			return err
		}},
		{"CopyObject from the sibling into its prefix", func() error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: &mine, CopySource: copySource})
			return err
		}},
		{"UploadPartCopy from the sibling into its prefix", func() error {
			up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: &mine})
			if err != nil {
				t.Fatalf("starting a multipart upload under its own prefix: %v", err)
			}
			defer func() {
				_, _ = c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: b, Key: &mine, UploadId: up.UploadId})
			}()
			_, err = c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: &mine, UploadId: up.UploadId, PartNumber: aws.Int32(1), CopySource: copySource})
			return err
		}},
		{"listing with an empty prefix", func() error {
			_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b})
			return err
		}},
		{"listing versions with an empty prefix", func() error {
			_, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b})
			return err
		}},
		{"listing the sibling's prefix", func() error {
			_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String(f.sibling.String())})
			return err
		}},
		{"listing its name without the slash (would show uid10)", func() error {
			_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String("shoot--p--uid1")})
			return err
		}},
		{"listing versions of the sibling's prefix", func() error {
			_, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b, Prefix: aws.String(f.sibling.String())})
			return err
		}},
		{"deleting the bucket", func() error {
			_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b})
			return err
		}},
		{"changing the bucket's versioning", func() error {
			_, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b, VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusSuspended}})
			return err
		}},
	}
	for _, e := range escapes {
		if code := errorCode(e.do()); code != "AccessDenied" {
			t.Errorf("%s: got %q; want AccessDenied", e.name, code)
		}
	}
	if f.exists(t, mine) {
		t.Error("a copy from the sibling landed under its prefix")
	}

	// DeleteObjects with its own key and the sibling's: its own goes, the sibling's is refused.
	own2 := f.ours.String() + "etcd-main/v2/Incr-3"
	f.put(t, c, own2, nil)
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &s3types.Delete{Objects: []s3types.ObjectIdentifier{{Key: &own2}, {Key: &f.siblingKey}}}})
	if err != nil {
		t.Fatalf("DeleteObjects: %v", err)
	}
	if len(out.Errors) != 1 || aws.ToString(out.Errors[0].Key) != f.siblingKey || aws.ToString(out.Errors[0].Code) != "AccessDenied" {
		t.Errorf("DeleteObjects errors %+v; want AccessDenied for the sibling's key only", out.Errors)
	}
	if f.exists(t, own2) || !f.exists(t, f.siblingKey) {
		t.Errorf("after DeleteObjects: its own exists %v, the sibling's exists %v; want gone, kept", f.exists(t, own2), f.exists(t, f.siblingKey))
	}
}

// TestMinIOEntryCredentialLifecycle walks issuance with a credential in use, a lost one, a
// retiring one, the read-only access of a source- entry beside the entry's, and revocation.
func TestMinIOEntryCredentialLifecycle(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t)
	iss := newEntryIssuer(t, &awsprovider.Provider{}, minio.SecretData(), awsapi.IssuerMinIO)
	issue := func(access objectstore.EntryAccess, inUse ...string) objectstore.Credential {
		t.Helper()
		c, err := iss.IssueEntryCredential(ctx, f.bucket, f.ours, access, inUse)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	works := func(c objectstore.Credential) bool {
		_, err := s3Of(t, c.Data).GetObject(ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: &f.oursKey})
		return err == nil
	}
	first := issue(objectstore.EntryReadWrite)
	second := issue(objectstore.EntryReadWrite, first.ID)
	if !works(first) || !works(second) {
		t.Fatal("a credential in use was revoked by the next issuance")
	}
	lost := issue(objectstore.EntryReadWrite, second.ID) // issued, never published
	third := issue(objectstore.EntryReadWrite, second.ID)
	if works(first) || works(lost) || !works(second) || !works(third) {
		t.Fatalf("after issuing with %s in use: first %v, lost %v, second %v, third %v; want only second and third valid", second.ID, works(first), works(lost), works(second), works(third))
	}

	// A source- entry's read-only credential: reads, never writes; independent of the entry's.
	ro := issue(objectstore.EntryReadOnly)
	roClient := s3Of(t, ro.Data)
	if !works(ro) {
		t.Fatal("the read-only credential cannot read its prefix")
	}
	f.put(t, roClient, f.ours.String()+"x", errors.New("refused"))
	if _, err := roClient.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &f.bucket, Key: &f.oursKey}); errorCode(err) != "AccessDenied" || !f.exists(t, f.oursKey) {
		t.Fatalf("read-only DeleteObject: %v", err)
	}
	if !works(third) {
		t.Fatal("issuing the read-only credential revoked the entry's")
	}

	owns := func(access objectstore.EntryAccess, id string) bool {
		t.Helper()
		ok, err := iss.Owns(ctx, f.bucket, f.ours, access, id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !owns(objectstore.EntryReadWrite, third.ID) || owns(objectstore.EntryReadWrite, first.ID) || owns(objectstore.EntryReadWrite, ro.ID) || owns(objectstore.EntryReadOnly, third.ID) {
		t.Fatal("Owns: want only a valid credential of that prefix and access")
	}

	// Retiring: second stays valid until its time through the next issuances, then goes.
	f.retire(t, iss, time.Now().Add(time.Hour), second.ID)
	fourth := issue(objectstore.EntryReadWrite, third.ID)
	if !works(second) || !works(fourth) {
		t.Fatal("a retiring credential was revoked by an issuance before its time")
	}
	f.retire(t, iss, time.Now(), third.ID)
	if works(third) {
		t.Fatal("a credential retired without a grace still works")
	}

	// Revocation of everything read-write: the read-only one stays.
	if err := iss.RevokeEntryCredentials(ctx, f.bucket, f.ours, objectstore.EntryReadWrite, nil); err != nil {
		t.Fatal(err)
	}
	if works(second) || works(fourth) || !works(ro) {
		t.Fatalf("after revoking read-write: second %v, fourth %v, read-only %v", works(second), works(fourth), works(ro))
	}
	if err := iss.RevokeEntryCredentials(ctx, f.bucket, f.ours, objectstore.EntryReadOnly, nil); err != nil || works(ro) {
		t.Fatalf("revoking read-only: %v, still works %v", err, works(ro))
	}
	if err := iss.RevokeEntryCredentials(ctx, f.bucket, f.ours, objectstore.EntryReadWrite, nil); err != nil {
		t.Fatalf("revoking again: %v", err)
	}
}

// On MinIO a retired service account ends by itself at its expiration (MinIO bounds it to at
// least 15 minutes from its clock's now; a shorter grace lasts 16): the retirement with a grace
// of seconds is taken, EndRetiredEntryCredentials reports that end, and leaves the account
// until then.
func TestMinIOEntryRetiredCredentialEndsAtItsTime(t *testing.T) {
	ctx := context.Background()
	f := newEntryFixture(t)
	iss := newEntryIssuer(t, &awsprovider.Provider{}, minio.SecretData(), awsapi.IssuerMinIO)
	retired := f.issue(t, iss)
	before := time.Now()
	f.retire(t, iss, before.Add(2*time.Second), retired.ID)
	published := f.issue(t, iss)
	next, err := iss.EndRetiredEntryCredentials(ctx, f.bucket, f.ours, objectstore.EntryReadWrite)
	if err != nil || next.Before(before.Add(15*time.Minute).Truncate(time.Second)) || next.After(time.Now().Add(17*time.Minute)) {
		t.Fatalf("next %v, %v; want MinIO's expiration, about 16 minutes from the retirement", next, err)
	}
	for _, id := range []string{retired.ID, published.ID} {
		if ok, err := iss.Owns(ctx, f.bucket, f.ours, objectstore.EntryReadWrite, id); err != nil || !ok {
			t.Fatalf("Owns(%s) = %v, %v after EndRetiredEntryCredentials before the end; want it kept", id, ok, err)
		}
	}
}
