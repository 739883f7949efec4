// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// store reaches MinIO directly, to fill and inspect buckets.
func store(t *testing.T) conformance.Stores {
	t.Helper()
	return conformance.StoresFor(t, &awsprovider.Provider{}, provider.Credentials{Data: secretData(minio.Endpoint), Region: region}, &awsapi.BackupBucketConfig{})
}

func bucketExists(t *testing.T, name string) bool {
	_, err := minio.S3Client().HeadBucket(framework.Ctx(t), &s3.HeadBucketInput{Bucket: &name})
	return err == nil
}

// readyBucket creates a bucket through the controller and waits for it.
func readyBucket(t *testing.T) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	bb := env.CreateBucket(t, framework.UniqueName("bucket-"), secretData(proxy.URL), minioConfig)
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	return bb
}

func TestBucketIsCreatedConvergedAndDriftCorrected(t *testing.T) {
	bb := readyBucket(t)
	if !bucketExists(t, bb.Name) {
		t.Fatalf("bucket %q does not exist", bb.Name)
	}
	encrypted := func() bool {
		out, err := minio.S3Client().GetBucketEncryption(framework.Ctx(t), &s3.GetBucketEncryptionInput{Bucket: &bb.Name})
		return err == nil && out.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm == types.ServerSideEncryptionAes256
	}
	if !encrypted() {
		t.Fatal("default encryption is not set")
	}
	if _, err := minio.S3Client().GetBucketPolicy(framework.Ctx(t), &s3.GetBucketPolicyInput{Bucket: &bb.Name}); err != nil {
		t.Fatalf("no TLS-only policy: %v", err)
	}

	// Drift behind the extension's back, then the next reconcile gardenlet requests.
	if _, err := minio.S3Client().DeleteBucketEncryption(framework.Ctx(t), &s3.DeleteBucketEncryptionInput{Bucket: &bb.Name}); err != nil {
		t.Fatal(err)
	}
	if _, err := minio.S3Client().DeleteBucketPolicy(framework.Ctx(t), &s3.DeleteBucketPolicyInput{Bucket: &bb.Name}); err != nil {
		t.Fatal(err)
	}
	env.Trigger(t, bb)
	env.WaitFor(t, bb, time.Minute, "bucket reconciled again", framework.SucceededAfter(time.Now()))
	if !encrypted() {
		t.Fatal("drift in default encryption was not corrected")
	}
	if _, err := minio.S3Client().GetBucketPolicy(framework.Ctx(t), &s3.GetBucketPolicyInput{Bucket: &bb.Name}); err != nil {
		t.Fatalf("drift in the bucket policy was not corrected: %v", err)
	}
}

func TestBucketErrorsCarryCodesAndTouchNothing(t *testing.T) {
	env.BucketsFail(t, []framework.BucketFailure{
		{Name: "bad keys", Bucket: "bad-keys-", Data: secretData(proxy.URL, "secretAccessKey", "wrong-secret"),
			ProviderConfig: minioConfig, Code: gardencorev1beta1.ErrorInfraUnauthenticated, Mentions: "unauthenticated"},
		{Name: "someone else's bucket", Bucket: foreignPrefix, Data: secretData(proxy.URL),
			ProviderConfig: minioConfig, Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "taken by another account"},
		{Name: "invalid providerConfig", Bucket: "bad-config-", Data: secretData(proxy.URL),
			ProviderConfig: `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"36h","mode":"compliance"}}`,
			Code:           gardencorev1beta1.ErrorConfigurationProblem, Mentions: "providerConfig.immutability.retentionPeriod"},
		{Name: "unknown providerConfig field", Bucket: "bad-field-", Data: secretData(proxy.URL),
			ProviderConfig: `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","encryptionn":{}}`,
			Code:           gardencorev1beta1.ErrorConfigurationProblem, Mentions: `unknown field "encryptionn"`},
		{Name: "secret without keys", Bucket: "no-keys-", Data: map[string][]byte{"endpoint": []byte(proxy.URL)},
			ProviderConfig: minioConfig, Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "accessKeyID"},
	}, []string{minio.SecretKey, "wrong-secret"}, func(t *testing.T, bucket string) {
		if !strings.HasPrefix(bucket, foreignPrefix) && bucketExists(t, bucket) {
			t.Fatalf("bucket %q was created despite the error", bucket)
		}
	})
	if n := proxy.ForeignWrites.Load(); n != 0 {
		t.Fatalf("%d writes reached someone else's bucket", n)
	}
}

func TestEntryWritesEtcdBackupSecret(t *testing.T) {
	bb := readyBucket(t)
	shoot := framework.UniqueName("shoot--p--")
	env.EnsureNamespace(t, shoot)
	// The entry secret carries stray keys an operator's secret may hold: they must not reach etcd-backup.
	data := secretData(proxy.URL, "stray.json", "{}", "note", "x")
	for _, name := range []string{shoot + "--uid1", "source-" + shoot + "--uid1"} {
		be := env.CreateEntry(t, name, bb.Name, data)
		env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
		secretName := "etcd-backup"
		if strings.HasPrefix(name, "source-") {
			secretName = "source-etcd-backup"
		}
		keys, s := env.SecretKeys(t, shoot, secretName)
		want := []string{"accessKeyID", "bucketName", "endpoint", "region", "s3ForcePathStyle", "secretAccessKey"}
		if !slices.Equal(keys, want) {
			t.Fatalf("%s has keys %v; want exactly %v", secretName, keys, want)
		}
		if string(s.Data["bucketName"]) != bb.Name || string(s.Data["region"]) != region {
			t.Fatalf("%s: bucketName %q region %q", secretName, s.Data["bucketName"], s.Data["region"])
		}
		if s.Annotations[genericactuator.AnnotationKeyCreatedByBackupEntry] != name {
			t.Fatalf("%s: created-by annotation %q; want %q", secretName, s.Annotations[genericactuator.AnnotationKeyCreatedByBackupEntry], name)
		}
	}
}

// fillEntry writes n objects under entry's prefix and a few neighbours that must survive.
func TestEntryDeletionRemovesExactlyItsPrefixAcrossReconciles(t *testing.T) {
	bb := readyBucket(t)
	shoot := framework.UniqueName("shoot--a--")
	env.EnsureNamespace(t, shoot)
	name := shoot + "--1"
	// A slow network (700 ms per request) and one request at a time: the deletion cannot
	// finish within one reconcile and must resume.
	slow, err := stack.StartProxy(minio.Endpoint, stack.ProxyOptions{Delay: 700 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	be := env.CreateEntry(t, name, bb.Name, secretData(slow.URL))
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	neighbours := framework.FillEntry(t, store(t), bb.Name, name+"/", 12_500)

	env.DeleteAcrossReconciles(t, be, 6*time.Minute) // a bound for a hung deletion, not a timing: under load on 2 cores it took over 3 minutes
	framework.AssertOnly(t, store(t), bb.Name, neighbours)
	s := &corev1.Secret{}
	if err := env.K8s.Get(framework.Ctx(t), client.ObjectKey{Namespace: shoot, Name: "etcd-backup"}, s); err == nil {
		t.Fatal("the etcd-backup secret survived the entry")
	}
}

func TestSourceEntryDeletesTheShootPrefix(t *testing.T) {
	bb := readyBucket(t)
	shoot := framework.UniqueName("shoot--s--")
	env.EnsureNamespace(t, shoot)
	// Written before the source entry exists, as gardener's migration does it (the source seed's
	// etcd is gone before the source entry is created).
	neighbours := framework.FillEntry(t, store(t), bb.Name, shoot+"--2/", 50)
	be := env.CreateEntry(t, "source-"+shoot+"--2", bb.Name, secretData(proxy.URL))
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	env.DeleteAndWaitGone(t, be, time.Minute)
	framework.AssertOnly(t, store(t), bb.Name, neighbours)
}

func TestEntryDeletionWithBadKeysDeletesNothing(t *testing.T) {
	bb := readyBucket(t)
	// The keys are rotated to wrong ones before the deletion.
	be, neighbours := env.BadSecretDeletesNothing(t, store(t), bb.Name, secretData(proxy.URL), "secretAccessKey", "wrong-secret", gardencorev1beta1.ErrorInfraUnauthenticated)
	// Fixing the keys lets the deletion finish.
	env.SetEntrySecretKey(t, be, "secretAccessKey", minio.SecretKey)
	env.DeleteAndWaitGone(t, be, time.Minute)
	framework.AssertOnly(t, store(t), bb.Name, neighbours)
}

func TestEntryDeletionSlowsDownUnderThrottling(t *testing.T) {
	bb := readyBucket(t)
	shoot := framework.UniqueName("shoot--t--")
	env.EnsureNamespace(t, shoot)
	throttling, err := stack.StartProxy(minio.Endpoint, stack.ProxyOptions{ThrottleEvery: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer throttling.Close()
	be := env.CreateEntry(t, shoot+"--1", bb.Name, secretData(throttling.URL))
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	neighbours := framework.FillEntry(t, store(t), bb.Name, shoot+"--1/", 5000)
	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	if throttling.Throttled.Load() == 0 {
		t.Fatal("the proxy throttled nothing; the test did not test throttling")
	}
	framework.AssertOnly(t, store(t), bb.Name, neighbours)
}

func TestBucketDeletion(t *testing.T) {
	bb := readyBucket(t)
	if err := conformance.PutMany(framework.Ctx(t), store(t), bb.Name, []string{"shoot--x--y--1/a", "shoot--x--y--2/b"}); err != nil {
		t.Fatal(err)
	}
	env.DeleteAndWaitGone(t, bb, time.Minute)
	if bucketExists(t, bb.Name) {
		t.Fatalf("bucket %q survived its BackupBucket", bb.Name)
	}
}

func TestLockedBucketDeletionReportsAndWaits(t *testing.T) {
	cfg := `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],` +
		`"immutability":{"retentionType":"bucket","retentionPeriod":"24h","mode":"governance"}}`
	bb := env.CreateBucket(t, framework.UniqueName("locked-"), secretData(proxy.URL), cfg)
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	if err := conformance.PutMany(framework.Ctx(t), store(t), bb.Name, []string{"shoot--x--y--1/a", "shoot--x--y--1/b"}); err != nil {
		t.Fatal(err)
	}
	if err := env.K8s.Delete(framework.Ctx(t), bb); err != nil {
		t.Fatal(err)
	}
	env.WaitFor(t, bb, time.Minute, "locked objects reported", framework.FailedWith(gardencorev1beta1.ErrorInfraDependencies))
	if desc := bb.Status.LastError.Description; !strings.Contains(desc, "2 object versions are held by retention locks") {
		t.Fatalf("lastError %q does not report the 2 locked versions", desc)
	}
	lc, err := minio.S3Client().GetBucketLifecycleConfiguration(framework.Ctx(t), &s3.GetBucketLifecycleConfigurationInput{Bucket: &bb.Name})
	if err != nil || !slices.ContainsFunc(lc.Rules, deferralRule) {
		t.Fatalf("no lifecycle rule takes over the locked objects: %v", err)
	}
	for _, k := range []string{"shoot--x--y--1/a", "shoot--x--y--1/b"} {
		if !taggedForDeletion(t, bb.Name, k) {
			t.Fatalf("locked %q is not tagged %s=true", k, awsprovider.DeferredDeletionTag)
		}
	}
	// No loop: the next attempt is scheduled for when the locks expire, not now.
	env.AssertNotRetriedSoon(t, bb)
	if !bucketExists(t, bb.Name) {
		t.Fatal("the bucket holding locked objects was deleted")
	}
}

func TestLockedEntryObjectsAreDeferredAndReported(t *testing.T) {
	cfg := `{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"],` +
		`"immutability":{"retentionType":"bucket","retentionPeriod":"24h","mode":"governance"}}`
	bb := env.CreateBucket(t, framework.UniqueName("locked-entry-"), secretData(proxy.URL), cfg)
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	shoot := framework.UniqueName("shoot--l--")
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, shoot+"--1", bb.Name, secretData(proxy.URL))
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	if err := conformance.PutMany(framework.Ctx(t), store(t), bb.Name, []string{shoot + "--1/a", shoot + "--1/b", shoot + "--10/keep"}); err != nil {
		t.Fatal(err)
	}
	// The entry's deletion completes: the locked objects are left to a lifecycle rule, not looped on.
	env.DeleteAndWaitGone(t, be, time.Minute)
	lc, err := minio.S3Client().GetBucketLifecycleConfiguration(framework.Ctx(t), &s3.GetBucketLifecycleConfigurationInput{Bucket: &bb.Name})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(lc.Rules, deferralRule) {
		t.Fatalf("no tag-scoped deferred-deletion rule in %+v", lc.Rules)
	}
	// Only what the deferral marked is in the rule's scope: the entry's versions, not the neighbour's.
	for k, want := range map[string]bool{shoot + "--1/a": true, shoot + "--1/b": true, shoot + "--10/keep": false} {
		if got := taggedForDeletion(t, bb.Name, k); got != want {
			t.Fatalf("%q tagged for deletion: %v; want %v", k, got, want)
		}
	}
	if !env.HasEvent(t, be.Name, backupentry.ReasonLockedObjectsDeferred, "2 object versions") {
		t.Fatalf("no %s event reporting the 2 locked versions of %s", backupentry.ReasonLockedObjectsDeferred, be.Name)
	}
}

// deferralRule is the bucket-wide rule that deletes what deferrals tagged.
func deferralRule(r types.LifecycleRule) bool {
	return aws.ToString(r.ID) == awsprovider.DeferredDeletionRule && r.Status == types.ExpirationStatusEnabled &&
		r.Filter != nil && r.Filter.Tag != nil && aws.ToString(r.Filter.Tag.Key) == awsprovider.DeferredDeletionTag
}

// taggedForDeletion reports whether every version of key carries the deferral tag.
func taggedForDeletion(t *testing.T, bucket, key string) bool {
	t.Helper()
	out, err := minio.S3Client().ListObjectVersions(framework.Ctx(t), &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: &key})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range out.Versions {
		if aws.ToString(v.Key) != key {
			continue
		}
		n++
		tags, err := minio.S3Client().GetObjectTagging(framework.Ctx(t), &s3.GetObjectTaggingInput{Bucket: &bucket, Key: v.Key, VersionId: v.VersionId})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(tags.TagSet, func(tag types.Tag) bool {
			return aws.ToString(tag.Key) == awsprovider.DeferredDeletionTag && aws.ToString(tag.Value) == "true"
		}) {
			return false
		}
	}
	return n > 0
}
