// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

func store(t *testing.T) conformance.Stores {
	t.Helper()
	return conformance.StoresFor(t, &azureprovider.Provider{}, provider.Credentials{Data: azurite.SecretData(), Region: region}, &azureapi.BackupBucketConfig{})
}

func containerExists(t *testing.T, name string) bool {
	return store(t).ListObjects(framework.Ctx(t), name, "", func([]objectstore.ObjectVersion) error { return nil }) == nil
}

func readyBucket(t *testing.T) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	bb := env.CreateBucket(t, framework.UniqueName("bucket-"), azurite.SecretData(), "")
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
	const config = `{"apiVersion":"azure.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig",`
	const wrongKey = "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ=="
	env.BucketsFail(t, []framework.BucketFailure{
		// Azurite answers a wrong key with 403 AuthorizationFailure (Azure: AuthenticationFailed -> ERR_INFRA_UNAUTHENTICATED).
		{Name: "wrong key", Data: stack.With(azurite.SecretData(), "storageKey", wrongKey), Code: gardencorev1beta1.ErrorInfraUnauthorized, Mentions: "forbidden"},
		{Name: "immutability with an account key", Data: azurite.SecretData(), ProviderConfig: config + `"immutability":{"retentionType":"bucket","retentionPeriod":"24h"}}`,
			Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "providerConfig.immutability"},
		{Name: "period not whole days", Data: azurite.SecretData(), ProviderConfig: config + `"immutability":{"retentionType":"bucket","retentionPeriod":"36h"}}`,
			Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "providerConfig.immutability.retentionPeriod"},
		{Name: "no account key", Data: stack.With(azurite.SecretData(), "storageKey", ""), Code: gardencorev1beta1.ErrorConfigurationProblem, Mentions: "storageKey"},
	}, []string{azurestack.AzuriteKey, wrongKey}, func(t *testing.T, bucket string) {
		if containerExists(t, bucket) {
			t.Fatalf("container %q was created despite the error", bucket)
		}
	})
}

func TestEntryWritesEtcdBackupSecret(t *testing.T) {
	bb := readyBucket(t)
	shoot := framework.UniqueName("shoot--p--")
	env.EnsureNamespace(t, shoot)
	be := env.CreateEntry(t, shoot+"--uid1", bb.Name, stack.With(azurite.SecretData(), "stray.json", "{}"))
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	keys, s := env.SecretKeys(t, shoot, "etcd-backup")
	if want := []string{"bucketName", "domain", "storageAccount", "storageKey"}; !slices.Equal(keys, want) {
		t.Fatalf("etcd-backup has keys %v; want exactly %v", keys, want)
	}
	if string(s.Data["bucketName"]) != bb.Name {
		t.Fatalf("bucketName %q", s.Data["bucketName"])
	}
}

func TestEntryDeletionRemovesExactlyItsPrefixAcrossReconciles(t *testing.T) {
	bb := readyBucket(t)
	shoot := framework.UniqueName("shoot--a--")
	env.EnsureNamespace(t, shoot)
	name := shoot + "--1"
	// Azurite itself is slow (~200 blobs/s, batches served one at a time): 8,000 blobs take
	// several 8-second reconciles; the proxy adds a network's latency on top.
	slow, err := stack.StartProxy("http://"+azurite.Host, stack.ProxyOptions{Delay: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	be := env.CreateEntry(t, name, bb.Name, stack.With(azurite.SecretData(), "domain", strings.TrimPrefix(slow.URL, "http://")))
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	neighbours := framework.FillEntry(t, store(t), bb.Name, name+"/", 8_000)
	env.DeleteAcrossReconciles(t, be, 5*time.Minute)
	framework.AssertOnly(t, store(t), bb.Name, neighbours)
}

func TestSourceEntryDeletesTheShootPrefix(t *testing.T) {
	bb := readyBucket(t)
	shoot := framework.UniqueName("shoot--s--")
	env.EnsureNamespace(t, shoot)
	// Written before the source entry exists, as in gardener's migration.
	neighbours := framework.FillEntry(t, store(t), bb.Name, shoot+"--1/", 600)
	be := env.CreateEntry(t, "source-"+shoot+"--1", bb.Name, azurite.SecretData())
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	env.DeleteAndWaitGone(t, be, time.Minute)
	framework.AssertOnly(t, store(t), bb.Name, neighbours)
}

func TestEntryDeletionWithBadKeyDeletesNothing(t *testing.T) {
	bb := readyBucket(t)
	// Azurite: AuthorizationFailure for a wrong key.
	be, _ := env.BadSecretDeletesNothing(t, store(t), bb.Name, azurite.SecretData(), "storageKey",
		"d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ==", gardencorev1beta1.ErrorInfraUnauthorized)
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
