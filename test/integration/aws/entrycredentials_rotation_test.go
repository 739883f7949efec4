// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/minio/madmin-go/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// rotatingEntryConfig is entryCredentialsConfig with a rotation grace.
func rotatingEntryConfig(grace string) string {
	return strings.Replace(entryCredentialsConfig, `"issuer":"MinIO"`, `"issuer":"MinIO","rotation":{"gracePeriod":"`+grace+`"}`, 1)
}

// reconciledEntry creates a BackupBucket of the operator's MinIO secret (its name starting with
// bucketPrefix) and, in a new shoot namespace (starting with shootPrefix), the bucket's
// BackupEntry with config; it returns both once reconciled, and the shoot's namespace.
func reconciledEntry(t *testing.T, bucketPrefix, shootPrefix, config string) (*extensionsv1alpha1.BackupBucket, *extensionsv1alpha1.BackupEntry, string) {
	t.Helper()
	operator := secretData(minio.Endpoint)
	bb := env.CreateBucket(t, framework.UniqueName(bucketPrefix), operator, minioConfig)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	shoot := framework.UniqueName(shootPrefix)
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntryWithConfig(t, shoot+"--1", bb.Name, operator, config)
	env.WaitFor(t, be, 2*time.Minute, "entry reconciled", framework.Succeeded)
	return bb, be, shoot
}

// iamEntryUser is the IAM user of the read-write credentials of entry in bucket.
func iamEntryUser(t *testing.T, bucket, entry string) string {
	t.Helper()
	prefix, err := objectstore.EntryPrefix(entry)
	if err != nil {
		t.Fatal(err)
	}
	return awsprovider.IAMEntryUserName(bucket, prefix, objectstore.EntryReadWrite)
}

// TestEntryCredentialRotationOnMinIO: the BackupEntry annotation rotate-credentials alone (the
// rotation scheduler asks for the reconcile) puts a new MinIO service account into etcd-backup;
// the previous one keeps working, its expiration set to the rotation grace (MinIO ends it by
// itself then); the annotation is removed. A second request within that grace ends the first
// early; with gracePeriod 0s a rotation ends the previous one at once.
func TestEntryCredentialRotationOnMinIO(t *testing.T) {
	bb, be, shoot := reconciledEntry(t, "entryrot-", "shoot--r--", rotatingEntryConfig("2h"))
	entry := be.Name
	published := func() map[string][]byte {
		_, s := env.SecretKeys(t, shoot, "etcd-backup")
		return s.Data
	}
	works := func(data map[string][]byte) error {
		return env.StoreFor(t, data).PutObject(framework.Ctx(t), bb.Name, entry+"/rotation-probe", []byte("x"))
	}
	first := published()

	rotate := func(previous map[string][]byte) map[string][]byte {
		t.Helper()
		request := framework.UniqueName("r-")
		current := &extensionsv1alpha1.BackupEntry{}
		if err := env.K8s.Get(framework.Ctx(t), client.ObjectKeyFromObject(be), current); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(current.DeepCopy())
		if current.Annotations == nil {
			current.Annotations = map[string]string{}
		}
		current.Annotations[backupentry.AnnotationRotateCredentials] = request // no operation annotation: the scheduler asks
		if err := env.K8s.Patch(framework.Ctx(t), current, patch); err != nil {
			t.Fatal(err)
		}
		env.WaitFor(t, be, 2*time.Minute, "the request honoured and removed", func(o extensionsv1alpha1.Object) bool {
			_, pending := o.GetAnnotations()[backupentry.AnnotationRotateCredentials]
			return !pending && string(published()["accessKeyID"]) != string(previous["accessKeyID"])
		})
		now := published()
		if err := works(now); err != nil {
			t.Fatalf("the rotated-in credential cannot write its prefix: %v", err)
		}
		env.WaitFor(t, be, 30*time.Second, "the condition naming the new credential and when it is rotated", func(o extensionsv1alpha1.Object) bool {
			c := v1beta1helper.GetCondition(o.GetExtensionStatus().GetConditions(), backupentry.ConditionEntryCredentials)
			return c != nil && strings.Contains(c.Message, string(now["accessKeyID"])) && strings.Contains(c.Message, "rotated on request only")
		})
		if !env.EventuallyHasEvent(t, entry, backupentry.ReasonEntryCredentialRotated, string(now["accessKeyID"]), 10*time.Second) {
			t.Fatalf("no %s event naming %s", backupentry.ReasonEntryCredentialRotated, now["accessKeyID"])
		}
		return now
	}

	u, err := url.Parse(minio.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := madmin.New(u.Host, minio.AccessKey, minio.SecretKey, u.Scheme == "https")
	if err != nil {
		t.Fatal(err)
	}
	retiring := func(name string, data map[string][]byte) {
		t.Helper()
		if err := works(data); err != nil {
			t.Fatalf("%s credential stopped working within its grace: %v", name, err)
		}
		info, err := admin.InfoServiceAccount(framework.Ctx(t), string(data["accessKeyID"]))
		if err != nil {
			t.Fatal(err)
		}
		if exp := info.Expiration; exp == nil || exp.Before(time.Now().Add(2*time.Hour-2*time.Minute)) || exp.After(time.Now().Add(2*time.Hour)) {
			t.Fatalf("%s service account expires at %v; want about now + 2h (rotation.gracePeriod)", name, exp)
		}
	}
	refused := func(name string, data map[string][]byte) {
		t.Helper()
		if err := works(data); !conformance.Refused(err) {
			t.Fatalf("%s credential: %v; want refused", name, err)
		}
	}

	second := rotate(first)
	retiring("the rotated-out", first)
	// A rotation within the previous one's grace: that one ends early, so that the entry never
	// holds more than two credentials (IAM's limit of keys per user).
	third := rotate(second)
	retiring("the rotated-out", second)
	refused("the first (retiring when the second rotation came)", first)

	// gracePeriod 0s: the next rotation ends the previous one at once.
	current := &extensionsv1alpha1.BackupEntry{}
	if err := env.K8s.Get(framework.Ctx(t), client.ObjectKeyFromObject(be), current); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(current.DeepCopy())
	current.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(rotatingEntryConfig("0s"))}
	if err := env.K8s.Patch(framework.Ctx(t), current, patch); err != nil {
		t.Fatal(err)
	}
	fourth := rotate(third)
	refused("the previous (gracePeriod 0s)", third)
	refused("the second (retiring)", second)
	if err := works(fourth); err != nil {
		t.Fatalf("the published credential: %v", err)
	}
	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	env.DeleteAndWaitGone(t, bb, 2*time.Minute)
}

// TestEntryCredentialRotationOnTheIAMStandIn: the same with issuer IAM on the IAM stand-in
// (its keys enforced by MinIO): a rotation leaves the entry's user the published key and the
// rotated-out one, tagged retire-<key>=<end of the grace>; a second rotation within that grace
// deletes the first key and its tag, so that IAM's two keys per user never stop a rotation.
func TestEntryCredentialRotationOnTheIAMStandIn(t *testing.T) {
	bb, be, shoot := reconciledEntry(t, "entryrotiam-", "shoot--i--", strings.Replace(rotatingEntryConfig("2h"), `"issuer":"MinIO"`, `"issuer":"IAM"`, 1))
	user := iamEntryUser(t, bb.Name, be.Name)
	published := func() string {
		_, s := env.SecretKeys(t, shoot, "etcd-backup")
		return string(s.Data["accessKeyID"])
	}
	rotate := func(previous string) string {
		t.Helper()
		env.Trigger(t, be, backupentry.AnnotationRotateCredentials, framework.UniqueName("r-"))
		env.WaitFor(t, be, 2*time.Minute, "rotated", func(o extensionsv1alpha1.Object) bool {
			_, pending := o.GetAnnotations()[backupentry.AnnotationRotateCredentials]
			return !pending && published() != previous && framework.Succeeded(o)
		})
		return published()
	}
	first := published()
	second := rotate(first)
	third := rotate(second)
	_, keys, _ := iam.User(user)
	tags := iam.Tags(user)
	slices.Sort(keys)
	want := []string{second, third}
	slices.Sort(want)
	if !slices.Equal(keys, want) || tags["retire-"+second] == "" || tags["retire-"+first] != "" {
		t.Fatalf("IAM user %s: keys %v, tags %v; want the published %s and the retiring %s (tagged), the first's key and tag gone", user, keys, tags, third, second)
	}
	if at, err := time.Parse(time.RFC3339, tags["retire-"+second]); err != nil || at.Before(time.Now().Add(2*time.Hour-2*time.Minute)) || at.After(time.Now().Add(2*time.Hour)) {
		t.Fatalf("retire-%s = %q; want about now + 2h (rotation.gracePeriod)", second, tags["retire-"+second])
	}
	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	if _, _, ok := iam.User(user); ok {
		t.Fatalf("IAM user %s survived the entry's deletion", user)
	}
	env.DeleteAndWaitGone(t, bb, 2*time.Minute)
}

// TestRetiredEntryCredentialEndsAtItsTimeOnTheIAMStandIn: with a rotation grace of seconds, the
// rotated-out IAM key is deleted at its time with no other event: the pass records when it
// ends, and the rotation scheduler asks for the pass that ends it.
func TestRetiredEntryCredentialEndsAtItsTimeOnTheIAMStandIn(t *testing.T) {
	bb, be, shoot := reconciledEntry(t, "entryendiam-", "shoot--e--", strings.Replace(rotatingEntryConfig("5s"), `"issuer":"MinIO"`, `"issuer":"IAM"`, 1))
	user := iamEntryUser(t, bb.Name, be.Name)
	published := func() string {
		_, s := env.SecretKeys(t, shoot, "etcd-backup")
		return string(s.Data["accessKeyID"])
	}
	first := published()
	env.Trigger(t, be, backupentry.AnnotationRotateCredentials, framework.UniqueName("r-"))
	env.WaitFor(t, be, 2*time.Minute, "rotated", func(o extensionsv1alpha1.Object) bool {
		_, pending := o.GetAnnotations()[backupentry.AnnotationRotateCredentials]
		return !pending && published() != first && framework.Succeeded(o)
	})
	second := published()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, keys, _ := iam.User(user)
		if slices.Equal(keys, []string{second}) && iam.Tags(user)["retire-"+first] == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("IAM user %s: keys %v, tags %v two minutes after a rotation with a grace of 5s; want only the published %s", user, keys, iam.Tags(user), second)
		}
		time.Sleep(time.Second)
	}
	if published() != second {
		t.Fatalf("etcd-backup holds %s; want the published %s untouched", published(), second)
	}
	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	env.DeleteAndWaitGone(t, bb, 2*time.Minute)
}
