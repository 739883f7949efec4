// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// store reaches the demo project's Swift account directly, to fill and inspect containers.
func store(t *testing.T) conformance.Stores {
	t.Helper()
	return conformance.StoresFor(t, &osprovider.Provider{}, provider.Credentials{Data: cloud.SecretData("demo"), Region: region}, &osapi.BackupBucketConfig{})
}

func containerExists(t *testing.T, name string) bool {
	err := store(t).ListObjects(framework.Ctx(t), name, "", func([]objectstore.ObjectVersion) error { return nil })
	return err == nil
}

func readyBucket(t *testing.T) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	bb := env.CreateBucket(t, framework.UniqueName("bucket-"), cloud.SecretData("demo"), "")
	env.WaitFor(t, bb, time.Minute, "bucket reconciled", framework.Succeeded)
	return bb
}

func TestContainerIsCreated(t *testing.T) {
	bb := readyBucket(t)
	if !containerExists(t, bb.Name) {
		t.Fatalf("container %q does not exist", bb.Name)
	}
}

func TestBucketErrorsCarryCodesAndTouchNothing(t *testing.T) {
	demo := cloud.SecretData("demo")
	wrong := map[string][]byte{}
	for k, v := range demo {
		wrong[k] = v
	}
	wrong["password"] = []byte("wrong-password")
	noAuthURL := map[string][]byte{"domainName": demo["domainName"], "tenantName": demo["tenantName"], "username": demo["username"], "password": demo["password"]}
	env.BucketsFail(t, []framework.BucketFailure{
		{Name: "bad password", Data: wrong, Code: gardencorev1beta1.ErrorInfraUnauthenticated, Mentions: "unauthenticated"},
		{Name: "immutability asked", Data: demo, ProviderConfig: `{"apiVersion":"openstack.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h"}}`,
			Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "providerConfig.immutability"},
		{Name: "secret without authURL", Data: noAuthURL, Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "authURL"},
	}, []string{"demopass", "wrong-password"}, func(t *testing.T, bucket string) {
		if containerExists(t, bucket) {
			t.Fatalf("container %q was created despite the error", bucket)
		}
	})
}

func TestEntryWritesEtcdBackupSecret(t *testing.T) {
	bb := readyBucket(t)
	shoot := framework.UniqueName("shoot--p--")
	env.EnsureNamespace(t, shoot)
	data := cloud.SecretData("demo")
	data["stray.json"] = []byte("{}")
	be := env.CreateEntry(t, shoot+"--uid1", bb.Name, data)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	keys, s := env.SecretKeys(t, shoot, "etcd-backup")
	want := []string{"authURL", "bucketName", "domainName", "password", "region", "tenantName", "username"}
	if !slices.Equal(keys, want) {
		t.Fatalf("etcd-backup has keys %v; want exactly %v", keys, want)
	}
	if s.Annotations[genericactuator.AnnotationKeyCreatedByBackupEntry] != be.Name {
		t.Fatalf("created-by annotation %q", s.Annotations[genericactuator.AnnotationKeyCreatedByBackupEntry])
	}
	// Swift cannot confine a credential to a prefix: the entry says it holds the bucket's, and why.
	c := v1beta1helper.GetCondition(be.Status.Conditions, backupentry.ConditionEntryCredentials)
	if c == nil || c.Status != gardencorev1beta1.ConditionFalse || c.Reason != backupentry.ReasonBucketWide || !strings.Contains(c.Message, `provider openstack cannot issue credentials that reach one prefix (docs/entry-credentials.md, section "openstack")`) {
		t.Fatalf("EntryCredentials condition %+v; want False/BucketWide saying openstack cannot issue them", c)
	}
}

func TestEntryDeletionRemovesExactlyItsPrefix(t *testing.T) {
	bb := readyBucket(t)
	for _, name := range []string{"shoot--a--b--1", "source-shoot--s--t--2"} {
		t.Run(name, func(t *testing.T) {
			shoot := strings.TrimSuffix(strings.TrimPrefix(name, "source-"), name[strings.LastIndex(name, "--"):])
			env.EnsureNamespace(t, shoot)
			// Written before the entry exists (a source entry's, as in gardener's migration).
			neighbours := framework.FillEntry(t, store(t), bb.Name, strings.TrimPrefix(name, "source-")+"/", 4*maxDeletes+13)
			be := env.CreateEntry(t, name, bb.Name, cloud.SecretData("demo"))
			env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
			env.DeleteAndWaitGone(t, be, 2*time.Minute)
			framework.AssertOnly(t, store(t), bb.Name, neighbours)
			// Clean the neighbours for the next case.
			var cleanup []objectstore.ObjectVersion
			for _, k := range neighbours {
				cleanup = append(cleanup, objectstore.ObjectVersion{Key: k})
			}
			if _, err := store(t).DeleteObjects(framework.Ctx(t), bb.Name, cleanup); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestEntryDeletionWithoutBulkDelete(t *testing.T) {
	bb := readyBucket(t)
	shoot := framework.UniqueName("shoot--n--")
	env.EnsureNamespace(t, shoot)
	data := cloud.SecretData("demo")
	data["region"] = []byte("NoBulk")
	be := env.CreateEntry(t, shoot+"--1", bb.Name, data)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	neighbours := framework.FillEntry(t, store(t), bb.Name, shoot+"--1/", 150)
	env.DeleteAndWaitGone(t, be, 2*time.Minute)
	framework.AssertOnly(t, store(t), bb.Name, neighbours)
}

func TestEntryDeletionWithBadCredentialsDeletesNothing(t *testing.T) {
	bb := readyBucket(t)
	be, _ := env.BadSecretDeletesNothing(t, store(t), bb.Name, cloud.SecretData("demo"), "password", "wrong-password", gardencorev1beta1.ErrorInfraUnauthenticated)
	env.Forget(t, be)
}

func TestBucketDeletion(t *testing.T) {
	bb := readyBucket(t)
	if err := conformance.PutMany(framework.Ctx(t), store(t), bb.Name, []string{"shoot--x--y--1/a", "shoot--x--y--2/b"}); err != nil {
		t.Fatal(err)
	}
	env.DeleteAndWaitGone(t, bb, time.Minute)
	if containerExists(t, bb.Name) {
		t.Fatalf("container %q survived its BackupBucket", bb.Name)
	}
}
