package aws_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// ensure reconciles bucket name with cfg as the BackupBucket actuator does: a store built from
// the secret's data and the config, then EnsureBucket.
func ensure(t *testing.T, data map[string][]byte, name string, cfg *awsapi.BackupBucketConfig) error {
	t.Helper()
	return newStoreWith(t, &awsprovider.Provider{}, data, cfg).EnsureBucket(context.Background(), objectstore.Bucket{Name: name, Region: "eu-central-1"})
}

func TestSettingsAreConvergedAndDriftIsCorrected(t *testing.T) {
	ctx := context.Background()
	raw, name := minio.S3Client(), newBucketName()
	if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	assertSettings := func(stage string) {
		t.Helper()
		enc, err := raw.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: &name})
		if err != nil || enc.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm != types.ServerSideEncryptionAes256 {
			t.Fatalf("%s: default encryption is not SSE-S3: %v", stage, err)
		}
		pol, err := raw.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: &name})
		if err != nil {
			t.Fatalf("%s: no bucket policy: %v", stage, err)
		}
		var doc struct {
			Statement []struct {
				Effect    string
				Condition map[string]map[string]any
				Resource  any
			}
		}
		if err := json.Unmarshal([]byte(aws.ToString(pol.Policy)), &doc); err != nil || len(doc.Statement) != 1 ||
			doc.Statement[0].Effect != "Deny" || strings.Trim(fmt.Sprint(doc.Statement[0].Condition["Bool"]["aws:SecureTransport"]), "[]") != "false" ||
			!strings.Contains(fmt.Sprint(doc.Statement[0].Resource), name+"/*") {
			t.Fatalf("%s: the bucket policy does not deny non-TLS requests on the bucket and its objects: %s", stage, aws.ToString(pol.Policy))
		}
	}
	assertSettings("after creation")

	// Drift: someone removes encryption and the policy behind the extension's back.
	if _, err := raw.DeleteBucketEncryption(ctx, &s3.DeleteBucketEncryptionInput{Bucket: &name}); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: &name}); err != nil {
		t.Fatal(err)
	}
	if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	assertSettings("after drift and a reconcile")
}

func TestUnimplementedSettingIsReportedAndCanBeSwitchedOff(t *testing.T) {
	noKMS, err := stack.StartMinIO(context.Background(), stack.MinIOOptions{Region: "eu-central-1", WithoutKMS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer noKMS.Stop()
	name := newBucketName()
	err = ensure(t, noKMS.SecretData(), name, minioConfig())
	if !errors.Is(err, objectstore.ErrUnsupported) || !strings.Contains(err.Error(), string(awsapi.SettingDefaultEncryption)) {
		t.Fatalf("got %v; want ErrUnsupported naming the DefaultEncryption switch", err)
	}
	cfg := minioConfig()
	cfg.DisabledSettings = append(cfg.DisabledSettings, awsapi.SettingDefaultEncryption)
	if err := ensure(t, noKMS.SecretData(), name, cfg); err != nil {
		t.Fatalf("with DefaultEncryption switched off: %v", err)
	}
}

func TestVersionedBucketDeletesEveryVersionAndDeleteMarker(t *testing.T) {
	ctx := context.Background()
	store, raw, name := newStore(t, minio.SecretData()), minio.S3Client(), newBucketName()
	if err := ensure(t, minio.SecretData(), name, minioConfig()); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &name,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	for round := range 2 { // two versions of every object
		var keys []string
		for i := range 600 {
			keys = append(keys, fmt.Sprintf("shoot--a--b--1/etcd-main/v2/Full-%04d", i))
		}
		keys = append(keys, fmt.Sprintf("shoot--a--b--10/etcd-main/v2/Full-%04d", round))
		if err := conformance.PutMany(ctx, store, name, keys); err != nil {
			t.Fatal(err)
		}
	}
	// A delete marker on top of one object.
	if _, err := raw.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &name, Key: aws.String("shoot--a--b--1/etcd-main/v2/Full-0000")}); err != nil {
		t.Fatal(err)
	}
	prefix, _ := objectstore.EntryPrefix("shoot--a--b--1")
	res, err := objectstore.DeletePrefix(ctx, store, name, prefix, objectstore.DeleteOptions{})
	if err != nil || !res.Done || res.Deleted != 1201 {
		t.Fatalf("got %+v, %v; want 1200 versions and 1 delete marker deleted", res, err)
	}
	left, err := raw.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &name})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.DeleteMarkers) != 0 || len(left.Versions) != 2 {
		t.Fatalf("left %d versions and %d delete markers; want only the neighbour's 2 versions", len(left.Versions), len(left.DeleteMarkers))
	}
	for _, v := range left.Versions {
		if !strings.HasPrefix(aws.ToString(v.Key), "shoot--a--b--10/") {
			t.Fatalf("a version outside the neighbour survived: %s", aws.ToString(v.Key))
		}
	}
}

func immutable(mode string, days int) *awsapi.BackupBucketConfig {
	cfg := minioConfig()
	cfg.Immutability = &awsapi.ImmutableConfig{RetentionType: awsapi.RetentionTypeBucket, Mode: mode, RetentionPeriod: metav1.Duration{Duration: time.Duration(days) * 24 * time.Hour}}
	return cfg
}

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

func TestComplianceRetentionIsNeverWeakened(t *testing.T) {
	raw, name := minio.S3Client(), newBucketName()
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeCompliance, 2)); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  *awsapi.BackupBucketConfig
	}{
		{"to governance", immutable(awsapi.ModeGovernance, 2)},
		{"shorter", immutable(awsapi.ModeCompliance, 1)},
		{"removed", minioConfig()},
	}
	for _, c := range cases {
		if err := ensure(t, minio.SecretData(), name, c.cfg); !errors.Is(err, objectstore.ErrInvalidConfig) {
			t.Errorf("%s: got %v; want ErrInvalidConfig", c.name, err)
		}
	}
	lock, err := raw.GetObjectLockConfiguration(context.Background(), &s3.GetObjectLockConfigurationInput{Bucket: &name})
	if err != nil || aws.ToInt32(lock.ObjectLockConfiguration.Rule.DefaultRetention.Days) != 2 || lock.ObjectLockConfiguration.Rule.DefaultRetention.Mode != types.ObjectLockRetentionModeCompliance {
		t.Fatalf("a refused change touched the retention: %+v, %v", lock, err)
	}
	if err := ensure(t, minio.SecretData(), name, immutable(awsapi.ModeCompliance, 3)); err != nil {
		t.Fatalf("extending a compliance retention must work: %v", err)
	}
}

func TestMissingCredentialKeysAreRefused(t *testing.T) {
	p := &awsprovider.Provider{}
	for name, data := range map[string]map[string][]byte{
		"no keys":     {"region": []byte("eu-central-1")},
		"bad boolean": withData(minio.SecretData(), "s3ForcePathStyle", "maybe"),
		"bad CA":      withData(minio.SecretData(), "trustedCaCert", "not a certificate"),
		"no region":   withoutRegion(withData(minio.SecretData())),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := p.NewStore(context.Background(), providerCreds(data), nil)
			if !errors.Is(err, objectstore.ErrInvalidConfig) {
				t.Fatalf("got %v; want ErrInvalidConfig", err)
			}
			for _, v := range data {
				if len(v) > 3 && strings.Contains(err.Error(), string(v)) {
					t.Fatalf("the error reveals a secret value: %v", err)
				}
			}
		})
	}
}
