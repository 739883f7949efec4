// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

const immutable24h = `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h"}}`

// secret is the operator's credentials: one service-account key for the whole package.
var secret = sync1(func() map[string][]byte { return gcs.SecretData() })

func sync1(f func() map[string][]byte) func() map[string][]byte {
	var v map[string][]byte
	return func() map[string][]byte {
		if v == nil {
			v = f()
		}
		return stack.With(v)
	}
}

// store reaches the stand-in directly, to fill and inspect buckets.
func store(t *testing.T) conformance.Stores {
	t.Helper()
	return conformance.StoresFor(t, &gcpprovider.Provider{}, provider.Credentials{Data: secret(), Region: region}, &gcpapi.BackupBucketConfig{})
}

func rawClient(t *testing.T) *storage.Client {
	t.Helper()
	c, _, err := (&gcpprovider.Provider{}).NewClient(context.Background(), provider.Credentials{Data: secret()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func bucketExists(t *testing.T, name string) bool {
	_, err := rawClient(t).Bucket(name).Attrs(framework.Ctx(t))
	return err == nil
}

func readyBucket(t *testing.T, providerConfig string) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	bb := env.CreateBucket(t, framework.UniqueName("bucket-"), secret(), providerConfig)
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	return bb
}

func lifecycle(_ *testing.T, bucket string) string {
	raw, _ := gcs.BucketField(bucket, "lifecycle")
	return string(raw)
}

func TestBucketIsCreatedConvergedAndDriftCorrected(t *testing.T) {
	bb := readyBucket(t, "")
	iam, _ := gcs.BucketField(bb.Name, "iamConfiguration")
	if !strings.Contains(string(iam), `"publicAccessPrevention":"enforced"`) || !strings.Contains(string(iam), `"enabled":true`) {
		t.Fatalf("iamConfiguration %s; want uniform access and enforced public access prevention", iam)
	}
	// The bucket's one deferral rule comes with the bucket: entries only mark and read it back.
	if lc := lifecycle(t, bb.Name); !strings.Contains(lc, "AbortIncompleteMultipartUpload") || !strings.Contains(lc, `{"action":{"type":"Delete"},"condition":{"daysSinceCustomTime":1}}`) {
		t.Fatalf("lifecycle %s; want the abort-upload rule and the bucket's deferral rule", lc)
	}
	// Drift: somebody replaces the lifecycle with a rule of theirs. Ours come back; theirs stays.
	gcs.SetBucketField(bb.Name, "lifecycle", json.RawMessage(`{"rule":[{"action":{"type":"Delete"},"condition":{"age":1}}]}`), false)
	env.Trigger(t, bb) // waits for the next second: statuses before it are older than now
	env.WaitFor(t, bb, time.Minute, "bucket reconciled again", framework.SucceededAfter(time.Now()))
	if lc := lifecycle(t, bb.Name); !strings.Contains(lc, `"age":1}`) || !strings.Contains(lc, "AbortIncompleteMultipartUpload") || !strings.Contains(lc, `"daysSinceCustomTime":1`) {
		t.Fatalf("drift not corrected, or the rule of others not kept: lifecycle %s", lc)
	}
}

func TestBucketErrorsCarryCodesAndTouchNothing(t *testing.T) {
	const revoked = "revoked@geb-test-project.iam.gserviceaccount.com"
	revokedKey := gcs.ServiceAccountKey(revoked)
	gcs.RevokeServiceAccountKey(revoked)
	env.BucketsFail(t, []framework.BucketFailure{
		{Name: "revoked key", Data: stack.With(secret(), "serviceaccount.json", string(revokedKey)), Code: gardencorev1beta1.ErrorInfraUnauthenticated, Mentions: "refused the credentials"},
		{Name: "name of another project", Bucket: foreignPrefix, Data: secret(), Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "taken by another project"},
		{Name: "retention too short", Data: secret(), ProviderConfig: `{"apiVersion":"gcp.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"1h"}}`,
			Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "providerConfig.immutability.retentionPeriod"},
		{Name: "no key file", Data: stack.With(secret(), "serviceaccount.json", ""), Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "serviceaccount.json"},
	}, []string{"PRIVATE KEY"}, func(t *testing.T, bucket string) {
		if bucketExists(t, bucket) {
			t.Fatalf("bucket %q was created despite the error", bucket)
		}
	})
}

func TestEntryWritesEtcdBackupSecret(t *testing.T) {
	bb := readyBucket(t, "")
	shoot := framework.UniqueName("shoot--p--")
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, shoot+"--uid1", bb.Name, stack.With(secret(), "stray.json", "{}"))
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	keys, s := env.SecretKeys(t, shoot, "etcd-backup")
	if want := []string{"bucketName", "serviceaccount.json", "storageAPIEndpoint"}; !slices.Equal(keys, want) {
		t.Fatalf("etcd-backup has keys %v; want exactly %v", keys, want)
	}
	if string(s.Data["bucketName"]) != bb.Name || s.Annotations[genericactuator.AnnotationKeyCreatedByBackupEntry] != be.Name {
		t.Fatalf("bucketName %q, created-by %q", s.Data["bucketName"], s.Annotations[genericactuator.AnnotationKeyCreatedByBackupEntry])
	}
}

func TestEntryDeletionRemovesExactlyItsPrefixAcrossReconciles(t *testing.T) {
	bb := readyBucket(t, "")
	shoot := framework.UniqueName("shoot--a--")
	env.EnsureNamespace(t, shoot)
	name := shoot + "--1"
	// A slow network: the deletion cannot finish within one reconcile and must resume.
	slow, err := stack.StartProxy(gcs.URL, stack.ProxyOptions{Delay: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	be := env.CreateEntry(t, name, bb.Name, stack.With(secret(), "storageAPIEndpoint", slow.URL+"/storage/v1/"))
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	neighbours := framework.FillEntry(t, store(t), bb.Name, name+"/", 6_000)
	env.DeleteAcrossReconciles(t, be, 6*time.Minute) // a bound for a hung deletion, not a timing: under load on 2 cores it took over 3 minutes
	framework.AssertOnly(t, store(t), bb.Name, neighbours)
}

func TestSourceEntryDeletesTheShootPrefix(t *testing.T) {
	bb := readyBucket(t, "")
	shoot := framework.UniqueName("shoot--s--")
	env.EnsureNamespace(t, shoot)
	// Written before the source entry exists, as in gardener's migration.
	neighbours := framework.FillEntry(t, store(t), bb.Name, shoot+"--1/", 250)
	be := env.CreateEntry(t, "source-"+shoot+"--1", bb.Name, secret())
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	env.DeleteAndWaitGone(t, be, time.Minute)
	framework.AssertOnly(t, store(t), bb.Name, neighbours)
}

func TestEntryDeletionWithBadKeyDeletesNothing(t *testing.T) {
	bb := readyBucket(t, "")
	const revoked = "revoked-entry@geb-test-project.iam.gserviceaccount.com"
	key := gcs.ServiceAccountKey(revoked)
	gcs.RevokeServiceAccountKey(revoked)
	be, _ := env.BadSecretDeletesNothing(t, store(t), bb.Name, secret(), "serviceaccount.json", string(key), gardencorev1beta1.ErrorInfraUnauthenticated)
	env.Forget(t, be)
}

func TestEntryDeletionCompletesUnderThrottling(t *testing.T) {
	bb := readyBucket(t, "")
	shoot := framework.UniqueName("shoot--t--")
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, shoot+"--1", bb.Name, secret())
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	neighbours := framework.FillEntry(t, store(t), bb.Name, shoot+"--1/", 1_000)
	before := gcs.Throttled.Load()
	gcs.SetThrottleEvery(4)
	defer gcs.SetThrottleEvery(0)
	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	if gcs.Throttled.Load() == before {
		t.Fatal("nothing was throttled; the test proves nothing")
	}
	framework.AssertOnly(t, store(t), bb.Name, neighbours)
}

func TestBucketDeletion(t *testing.T) {
	bb := readyBucket(t, "")
	if err := conformance.PutMany(framework.Ctx(t), store(t), bb.Name, []string{"shoot--x--y--1/a", "shoot--x--y--2/b"}); err != nil {
		t.Fatal(err)
	}
	env.DeleteAndWaitGone(t, bb, time.Minute)
	if bucketExists(t, bb.Name) {
		t.Fatalf("bucket %q survived its BackupBucket", bb.Name)
	}
}

func customTimes(t *testing.T, bucket string, keys ...string) []bool {
	t.Helper()
	var marked []bool
	for _, k := range keys {
		a, err := rawClient(t).Bucket(bucket).Object(k).Attrs(framework.Ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		marked = append(marked, !a.CustomTime.IsZero())
	}
	return marked
}

func TestLockedBucketDeletionReportsAndWaits(t *testing.T) {
	bb := readyBucket(t, immutable24h)
	keys := []string{"shoot--x--y--1/a", "shoot--x--y--1/b"}
	if err := conformance.PutMany(framework.Ctx(t), store(t), bb.Name, keys); err != nil {
		t.Fatal(err)
	}
	if err := env.K8s.Delete(framework.Ctx(t), bb); err != nil {
		t.Fatal(err)
	}
	env.WaitFor(t, bb, time.Minute, "locked objects reported", framework.FailedWith(gardencorev1beta1.ErrorInfraDependencies))
	if desc := bb.Status.LastError.Description; !strings.Contains(desc, "2 object versions are held by retention locks") {
		t.Fatalf("lastError %q does not report the 2 locked objects", desc)
	}
	if marked := customTimes(t, bb.Name, keys...); !slices.Equal(marked, []bool{true, true}) {
		t.Fatalf("locked objects marked for the lifecycle rule: %v", marked)
	}
	if lc := lifecycle(t, bb.Name); !strings.Contains(lc, `{"action":{"type":"Delete"},"condition":{"daysSinceCustomTime":1}}`) {
		t.Fatalf("lifecycle %s lacks the whole-bucket deferral rule", lc)
	}
	// No loop: the next attempt is scheduled for when the locks expire, not now.
	env.AssertNotRetriedSoon(t, bb)
	if !bucketExists(t, bb.Name) {
		t.Fatal("the bucket holding locked objects was deleted")
	}
	env.Forget(t, bb)
}

func TestLockedEntryObjectsAreDeferredAndReported(t *testing.T) {
	bb := readyBucket(t, immutable24h)
	shoot := framework.UniqueName("shoot--l--")
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, shoot+"--1", bb.Name, secret())
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	keys := []string{shoot + "--1/a", shoot + "--1/b", shoot + "--10/keep"}
	if err := conformance.PutMany(framework.Ctx(t), store(t), bb.Name, keys); err != nil {
		t.Fatal(err)
	}
	// The entry's deletion completes: the locked objects are handed to the lifecycle rule.
	env.DeleteAndWaitGone(t, be, time.Minute)
	if marked := customTimes(t, bb.Name, keys...); !slices.Equal(marked, []bool{true, true, false}) {
		t.Fatalf("marked %v; want exactly the entry's two objects", marked)
	}
	if !env.HasEvent(t, be.Name, backupentry.ReasonLockedObjectsDeferred, "2 object versions") {
		t.Fatalf("no %s event reporting the 2 locked objects of %s", backupentry.ReasonLockedObjectsDeferred, be.Name)
	}
	if !env.HasEvent(t, be.Name, backupentry.ReasonLockedObjectsDeferred, "daysSinceCustomTime 1") {
		t.Fatalf("the %s event does not name the entry's lifecycle rule", backupentry.ReasonLockedObjectsDeferred)
	}
	// GCS runs the rule (the front plays it) once the day of retention is over: the entry's
	// objects go, the neighbour stays.
	if _, err := gcs.RunLifecycle(bb.Name, time.Now().Add(49*time.Hour)); err != nil {
		t.Fatal(err)
	}
	left, err := conformance.ListKeys(framework.Ctx(t), store(t), bb.Name, "")
	if err != nil || !slices.Equal(left, []string{shoot + "--10/keep"}) {
		t.Fatalf("after the lifecycle ran the bucket holds %v, %v; want only the neighbour", left, err)
	}
}
