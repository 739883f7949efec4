package aws_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
)

func TestObjectLockedObjectsAreReportedAndDeferred(t *testing.T) {
	ctx := context.Background()
	store, raw, name := newStore(t, minio.SecretData()), minio.S3Client(), newBucketName()
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeGovernance, 1)); err != nil {
		t.Fatal(err)
	}
	lock, err := raw.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &name})
	if err != nil || lock.ObjectLockConfiguration.Rule.DefaultRetention.Mode != types.ObjectLockRetentionModeGovernance || aws.ToInt32(lock.ObjectLockConfiguration.Rule.DefaultRetention.Days) != 1 {
		t.Fatalf("object lock not converged: %+v, %v", lock, err)
	}
	before := time.Now()
	if err := conformance.PutMany(ctx, store, name, []string{"shoot--a--b--1/a", "shoot--a--b--1/b", "shoot--a--b--1/c", "shoot--a--b--10/keep"}); err != nil {
		t.Fatal(err)
	}
	// The listing tells each version's retention from the bucket's default: a day after its write.
	err = store.ListObjects(ctx, name, "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			if o.Modified.IsZero() || !o.RetainUntil.Equal(o.Modified.AddDate(0, 0, 1)) {
				t.Errorf("%q listed with write time %v and retention until %v; want a day after the write", o.Key, o.Modified, o.RetainUntil)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, store, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Locked != 3 || res.Deleted != 0 {
		t.Fatalf("got %+v, %v; want the 3 locked versions counted, none deleted", res, err)
	}
	if d := res.EarliestRetainUntil.Sub(before); d < 23*time.Hour || d > 25*time.Hour {
		t.Fatalf("earliest retain-until %v is not about a day from now", res.EarliestRetainUntil)
	}
	if _, err := store.DeferDeletion(ctx, name, prefix.String()); err != nil {
		t.Fatal(err)
	}
	lc, err := raw.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &name})
	if err != nil {
		t.Fatal(err)
	}
	found := slices.ContainsFunc(lc.Rules, func(r types.LifecycleRule) bool {
		return r.Filter != nil && aws.ToString(r.Filter.Prefix) == prefix.String() && r.Expiration != nil && r.NoncurrentVersionExpiration != nil
	})
	if !found {
		t.Fatalf("no deferred-deletion lifecycle rule for %q in %+v", prefix.String(), lc.Rules)
	}
	// A reconcile keeps the deferred rule while its objects are there.
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeGovernance, 1)); err != nil {
		t.Fatal(err)
	}
	lc, _ = raw.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: &name})
	if len(lc.Rules) != 1 {
		t.Fatalf("a reconcile dropped or duplicated the deferred rule: %+v", lc.Rules)
	}
}
