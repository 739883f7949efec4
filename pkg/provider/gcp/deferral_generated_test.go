package gcp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestDeferralWithGeneratedCredentialsSaysWhatIsMissing: a bucket's generated credentials
// (roles/storage.objectAdmin on the bucket) may mark generations but not write the bucket's
// lifecycle, and are not given that right; their deferral is refused as forbidden with what is
// missing and whose credentials complete it, never claimed.
func TestDeferralWithGeneratedCredentialsSaysWhatIsMissing(t *testing.T) {
	ctx := context.Background()
	s, iss := issuingStore(t)
	bucket := newBucketName()
	if err := s.EnsureBucket(ctx, objectstore.Bucket{Name: bucket, Region: region}); err != nil {
		t.Fatal(err)
	}
	cred, err := iss.IssueCredential(ctx, bucket, nil)
	if err != nil {
		t.Fatal(err)
	}
	generated := newStore(t, cred.Data)
	if err := generated.PutObject(ctx, bucket, "shoot--a--b--1/full", []byte("v")); err != nil {
		t.Fatal(err)
	}
	_, err = generated.DeferDeletion(ctx, bucket, "shoot--a--b--1/")
	if !errors.Is(err, objectstore.ErrForbidden) || !strings.Contains(err.Error(), "may not read or write the bucket's lifecycle rules") ||
		!strings.Contains(err.Error(), "the BackupBucket's") {
		t.Fatalf("DeferDeletion with generated credentials = %v; want ErrForbidden saying what is missing and whose credentials complete it", err)
	}
}
