// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/badinput"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// The wrong inputs of Azure Blob Storage: the harness (test/badinput) checks that each is refused
// with its sentinel, naming its cause, showing no secret value, that Azurite's accounts hold the
// same containers before and after, and that the ARM stand-in recorded no write.

var azureConfigHead = badinput.Head(azureapi.Type)

// badInputEnv is where the cases run: Azurite (account keys) and the ARM stand-in (service
// principal, workload identity) whose accounts' data plane is Azurite's stand-in account.
type badInputEnv struct {
	arm *azurestack.ARM
}

func (e badInputEnv) provider(arm bool) *azureprovider.Provider {
	if arm {
		return &azureprovider.Provider{Cloud: e.arm.Cloud(), ManagementTransport: e.arm.Client()}
	}
	return &azureprovider.Provider{}
}

// reconcile does what the BackupBucket actuator does: a store from the secret, then EnsureBucket
// with the bucket's name, spec.region and decoded providerConfig.
func (e badInputEnv) reconcile(arm, wi bool, bucket, region, config string) func(*testing.T, map[string][]byte) error {
	return func(_ *testing.T, data map[string][]byte) error {
		p := e.provider(arm)
		cfg, err := p.Decode([]byte(config))
		if err != nil {
			return err
		}
		s, err := p.NewManagement(context.Background(), provider.Credentials{Data: data, WorkloadIdentity: wi, Region: region}, cfg)
		if err != nil {
			return err
		}
		return s.EnsureBucket(context.Background(), objectstore.Bucket{Name: bucket, Region: region})
	}
}

// storeOnly builds the store the BackupBucket actuator would build, and nothing else: for
// secrets that point at a real Azure endpoint, the refusal must come before any request.
func (e badInputEnv) storeOnly(bucketConfig string) func(*testing.T, map[string][]byte) error {
	return func(_ *testing.T, data map[string][]byte) error {
		p := e.provider(false)
		cfg, err := p.Decode([]byte(bucketConfig))
		if err != nil {
			return err
		}
		if _, err := p.NewManagement(context.Background(), provider.Credentials{Data: data, Region: "westeurope"}, cfg); err != nil {
			return err
		}
		return errors.New("the store was built: its first request would go to Azure")
	}
}

// deleteEntry does what the BackupEntry delegate does on deletion: a store from the secret, then
// the deletion engine on the entry's prefix in spec.bucketName.
func (e badInputEnv) deleteEntry(arm bool, bucket string) func(*testing.T, map[string][]byte) error {
	return func(_ *testing.T, data map[string][]byte) error {
		s, err := e.provider(arm).NewDataPlane(context.Background(), provider.Credentials{Data: data, Region: "westeurope"})
		if err != nil {
			return err
		}
		return badinput.DeleteEntry(s, bucket)
	}
}

// deleteBucket does what the BackupBucket actuator does on deletion.
func (e badInputEnv) deleteBucket(arm, wi bool, bucket string) func(*testing.T, map[string][]byte) error {
	return func(_ *testing.T, data map[string][]byte) error {
		s, err := e.provider(arm).NewManagement(context.Background(), provider.Credentials{Data: data, WorkloadIdentity: wi, Region: "westeurope"}, &azureapi.BackupBucketConfig{})
		if err != nil {
			return err
		}
		return s.DeleteBucket(context.Background(), bucket)
	}
}

// onStore runs one store call with a valid secret.
func (e badInputEnv) onStore(arm bool, call func(conformance.Stores) error) func(*testing.T, map[string][]byte) error {
	return func(_ *testing.T, data map[string][]byte) error {
		s, err := conformance.NewStores(context.Background(), e.provider(arm), provider.Credentials{Data: data, Region: "westeurope"}, &azureapi.BackupBucketConfig{})
		if err != nil {
			return err
		}
		return call(s)
	}
}

func writeAzureEtcdBackup(_ *testing.T, data map[string][]byte) error {
	be := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{Region: "westeurope", BucketName: "geb-bad-input"}}
	_, err := (&azureprovider.Provider{}).EtcdBackupSecretData(be, data)
	return err
}

// secretValues are the keys whose values must never appear in a message.
var secretValues = []string{azureprovider.KeyStorageKey, azureprovider.KeyClientSecret, azureprovider.KeyWorkloadIdentityToken}

func TestBadInputIsRefusedNamingItsCauseAndTouchesNothing(t *testing.T) {
	arm := startARM(t)
	e := badInputEnv{arm: arm}
	// A bucket of ours in westeurope through the management plane, for the region cases.
	ours := newBucketName()
	if err := armStore(t, arm, arm.ServicePrincipal(), false).EnsureBucket(ctx(t), objectstore.Bucket{Name: ours, Region: "westeurope"}); err != nil {
		t.Fatal(err)
	}
	good := azurite.SecretData()
	etcd := badinput.With(good, "bucketName", "geb-bad-input")
	sp := arm.ServicePrincipal()
	wi := arm.WorkloadIdentity()
	fresh := newBucketName
	// A well-formed key that is not the account's: Azure answers 403 AuthenticationFailed
	// (ErrUnauthenticated); Azurite answers 403 AuthorizationFailure (ErrForbidden).
	azuriteRefusal := objectstore.ErrForbidden
	wrongKey := "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ=="
	wiCfg := func(body string) string {
		return "apiVersion: azure.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\n" + body
	}
	wiBody := fmt.Sprintf("clientID: %s\ntenantID: %s\nsubscriptionID: %s\n", arm.ClientID, arm.TenantID, arm.SubscriptionID)

	// The rows every provider shares (apiVersion, kind, strict decoding, backupFreshness, bucket
	// names no store takes) are badinput.Shared, run on every registered API by pkg/provider/all.
	cases := []badinput.Case{
		// providerConfig: strict decoding, every error with its field path.
		badinput.Config(azureapi.API, "unknown field", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  extra: 1\n", "providerConfig", "immutability.extra"),
		badinput.Config(azureapi.API, "unknown top-level field", azureConfigHead+"versioning: true\n", "providerConfig", "versioning"),
		badinput.Config(azureapi.API, "wrong apiVersion", "apiVersion: azure.provider.extensions.gardener.cloud/v1beta1\nkind: BackupBucketConfig\n", "providerConfig.apiVersion"),
		badinput.Config(azureapi.API, "another provider's apiVersion", "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n", "providerConfig.apiVersion"),
		badinput.Config(azureapi.API, "object given as a boolean", azureConfigHead+"immutability: yes\n", "providerConfig.immutability", "must be an object"),
		badinput.Config(azureapi.API, "string given as a number", azureConfigHead+"storageAccount:\n  skuName: 3\n", "providerConfig.storageAccount.skuName", "must be a string"),
		badinput.Config(azureapi.API, "boolean given as a string", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  locked: maybe\n", "providerConfig.immutability.locked", "must be true or false"),
		badinput.Config(azureapi.API, "integer given as a string", azureConfigHead+"softDelete:\n  blobRetentionDays: seven\n  containerRetentionDays: 7\n", "providerConfig.softDelete.blobRetentionDays"),
		badinput.Config(azureapi.API, "duration given as a number", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(azureapi.API, "unparseable duration", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: forever\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(azureapi.API, "negative duration", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: -48h\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(azureapi.API, "duration not whole days", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 30h\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(azureapi.API, "unknown retention type", azureConfigHead+"immutability:\n  retentionType: object\n  retentionPeriod: 24h\n", "providerConfig.immutability.retentionType"),
		badinput.Config(azureapi.API, "unknown skuName", azureConfigHead+"storageAccount:\n  skuName: Standard_XRS\n", "providerConfig.storageAccount.skuName", "Standard_ZRS"),
		badinput.Config(azureapi.API, "premium skuName", azureConfigHead+"storageAccount:\n  skuName: Premium_LRS\n", "providerConfig.storageAccount.skuName"),
		badinput.Config(azureapi.API, "unknown cloud", azureConfigHead+"cloudConfiguration:\n  name: AzureStack\n", "providerConfig.cloudConfiguration.name"),
		badinput.Config(azureapi.API, "negative soft delete days", azureConfigHead+"softDelete:\n  blobRetentionDays: -1\n  containerRetentionDays: 7\n", "providerConfig.softDelete.blobRetentionDays"),
		badinput.Config(azureapi.API, "soft delete beyond 365 days", azureConfigHead+"softDelete:\n  blobRetentionDays: 7\n  containerRetentionDays: 400\n", "providerConfig.softDelete.containerRetentionDays"),
		badinput.Config(azureapi.API, "unparseable rotation period", azureConfigHead+"rotation:\n  period: monthly\n", "providerConfig.rotation.period"),

		// providerConfig settings an account key cannot honour: refused before any request.
		{Name: "account key: immutability", Data: good, Run: e.reconcile(false, false, fresh(), "westeurope", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n"),
			Want: objectstore.ErrInvalidConfig, Names: []string{"spec.providerConfig.immutability", `"storageKey"`}},
		{Name: "account key: handBack", Data: good, Run: e.reconcile(false, false, fresh(), "westeurope", azureConfigHead+"handBack: true\n"),
			Want: objectstore.ErrInvalidConfig, Names: []string{"spec.providerConfig.handBack", `"storageKey"`}},
		{Name: "account key: softDelete", Data: good, Run: e.reconcile(false, false, fresh(), "westeurope", azureConfigHead+"softDelete:\n  blobRetentionDays: 7\n  containerRetentionDays: 7\n"),
			Want: objectstore.ErrInvalidConfig, Names: []string{"spec.providerConfig.softDelete", `"storageKey"`}},
		{Name: "account key: skuName", Data: good, Run: e.reconcile(false, false, fresh(), "westeurope", azureConfigHead+"storageAccount:\n  skuName: Standard_LRS\n"),
			Want: objectstore.ErrInvalidConfig, Names: []string{"spec.providerConfig.storageAccount.skuName"}},
		{Name: "account key: cloudConfiguration of another cloud than the secret's domain", Data: badinput.Without(badinput.Without(good, "emulatorEnabled"), "domain"), Run: e.storeOnly(azureConfigHead + "cloudConfiguration:\n  name: AzureChina\n"),
			Want: objectstore.ErrInvalidConfig, Names: []string{"spec.providerConfig.cloudConfiguration.name", `"domain"`, "blob.core.chinacloudapi.cn"}},
		{Name: "account key: cloudConfiguration with a domain of another cloud", Data: badinput.With(badinput.Without(good, "emulatorEnabled"), "domain", "blob.core.chinacloudapi.cn"), Run: e.storeOnly(azureConfigHead + "cloudConfiguration:\n  name: AzureGovernment\n"),
			Want: objectstore.ErrInvalidConfig, Names: []string{"spec.providerConfig.cloudConfiguration.name", `"domain"`, "blob.core.usgovcloudapi.net"}},
		{Name: "account key: rotation", Data: good, Run: e.reconcile(false, false, fresh(), "westeurope", azureConfigHead+"rotation:\n  period: 720h\n"),
			Want: objectstore.ErrInvalidConfig, Names: []string{"spec.providerConfig.rotation"}},

		// Account key secrets, on bucket reconcile.
		{Name: "secret: no storageAccount", Data: badinput.Without(good, "storageAccount"), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAccount"`}},
		{Name: "secret: empty storageAccount", Data: badinput.With(good, "storageAccount", ""), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAccount"`}},
		{Name: "secret: no storageKey", Data: badinput.Without(good, "storageKey"), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageKey"`}},
		{Name: "secret: empty storageKey", Data: badinput.With(good, "storageKey", ""), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageKey"`}},
		{Name: "secret: storageKey not base64", Data: badinput.With(good, "storageKey", "not-base64-key-value!"), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageKey"`, "base64"}},
		{Name: "secret: storageAccount uppercase", Data: badinput.With(good, "storageAccount", "DevStoreAccount1"), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAccount"`, "3 to 24"}},
		{Name: "secret: storageAccount with a trailing newline", Data: badinput.With(good, "storageAccount", azurestack.AzuriteAccount+"\n"), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAccount"`}},
		{Name: "secret: wrong storageKey", Data: badinput.With(good, "storageKey", wrongKey), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrUnauthenticated, Or: azuriteRefusal, Names: []string{`"storageAccount"`, `"storageKey"`}},
		{Name: "secret: domain with a path", Data: badinput.With(good, "domain", azurite.Host+"/x"), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"domain"`}},
		{Name: "secret: domain with a scheme", Data: badinput.With(badinput.Without(good, "emulatorEnabled"), "domain", "https://blob.core.windows.net"), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"domain"`}},
		{Name: "secret: domain with a trailing newline", Data: badinput.With(good, "domain", azurite.Host+"\n"), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"domain"`}},
		{Name: "secret: emulatorEnabled on a non-loopback host", Data: badinput.With(good, "domain", "blob.example.com:10000"), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"emulatorEnabled"`, "loopback"}},
		{Name: "secret: emulatorEnabled not a boolean", Data: badinput.With(good, "emulatorEnabled", "yes"), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"emulatorEnabled"`}},
		{Name: "secret: emulatorEnabled without a domain", Data: badinput.Without(good, "domain"), Run: e.reconcile(false, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"domain"`, `"emulatorEnabled"`}},

		// Service principal secrets.
		{Name: "service principal: no clientSecret", Data: badinput.Without(sp, "clientSecret"), Run: e.reconcile(true, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"clientSecret"`}},
		{Name: "service principal: empty tenantID", Data: badinput.With(sp, "tenantID", ""), Run: e.reconcile(true, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"tenantID"`}},
		{Name: "service principal: no subscriptionID", Data: badinput.Without(sp, "subscriptionID"), Run: e.reconcile(true, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"subscriptionID"`}},
		{Name: "service principal: no clientID", Data: badinput.Without(sp, "clientID"), Run: e.reconcile(true, false, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"clientID"`}},
		{Name: "service principal: client secret Entra ID refuses", Data: badinput.With(sp, "clientSecret", "not-the-client-secret-value"), Run: e.reconcile(true, false, fresh(), "westeurope", ""),
			Want: objectstore.ErrUnauthenticated, Names: []string{`"clientSecret"`, `"tenantID"`, `"clientID"`}},
		{Name: "mix: service principal and account key", Data: badinput.With(badinput.With(sp, "storageAccount", azurestack.AzuriteAccount), "storageKey", azurestack.AzuriteKey), Run: e.reconcile(true, false, fresh(), "westeurope", ""),
			Want: objectstore.ErrInvalidConfig, Names: []string{`"clientSecret"`, `"storageKey"`}},
		{Name: "mix: part of a service principal with an account key", Data: badinput.With(good, "tenantID", arm.TenantID), Run: e.reconcile(false, false, fresh(), "westeurope", ""),
			Want: objectstore.ErrInvalidConfig, Names: []string{`"tenantID"`, `"storageKey"`}},

		// Workload identity secrets.
		{Name: "workload identity: no token", Data: badinput.Without(wi, "token"), Run: e.reconcile(true, true, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"token"`}},
		{Name: "workload identity: empty token", Data: badinput.With(wi, "token", " \n"), Run: e.reconcile(true, true, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"token"`}},
		{Name: "workload identity: no config", Data: badinput.Without(wi, "config"), Run: e.reconcile(true, true, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"config"`}},
		{Name: "workload identity: config of the wrong kind", Data: badinput.With(wi, "config", "apiVersion: azure.provider.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"), Run: e.reconcile(true, true, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{"config.kind"}},
		{Name: "workload identity: config without subscriptionID", Data: badinput.With(wi, "config", wiCfg(fmt.Sprintf("clientID: %s\ntenantID: %s\n", arm.ClientID, arm.TenantID))), Run: e.reconcile(true, true, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{"config.subscriptionID"}},
		{Name: "workload identity: config with an unknown field", Data: badinput.With(wi, "config", wiCfg(wiBody+"clientSecret: x\n")), Run: e.reconcile(true, true, fresh(), "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{"config", "clientSecret"}},
		{Name: "workload identity: token Entra ID refuses", Data: badinput.With(wi, "token", "not-the-workload-identity-token"), Run: e.reconcile(true, true, fresh(), "westeurope", ""),
			Want: objectstore.ErrUnauthenticated, Names: []string{`"token"`}},
		{Name: "mix: workload identity with a client secret", Data: badinput.With(wi, "clientSecret", "a-client-secret-value"), Run: e.reconcile(true, true, fresh(), "westeurope", ""),
			Want: objectstore.ErrInvalidConfig, Names: []string{`"clientSecret"`, `"token"`}},
		{Name: "mix: workload identity with an account key", Data: badinput.With(wi, "storageKey", azurestack.AzuriteKey), Run: e.reconcile(true, true, fresh(), "westeurope", ""),
			Want: objectstore.ErrInvalidConfig, Names: []string{`"storageKey"`, `"token"`}},

		// Regions.
		{Name: "region: spec.region empty", Data: sp, Run: e.reconcile(true, false, fresh(), "", ""), Want: objectstore.ErrInvalidConfig, Names: []string{"spec.region"}},
		{Name: "region: an account of ours in another location", Data: sp, Run: e.reconcile(true, false, ours, "northeurope", ""), Want: objectstore.ErrInvalidConfig,
			Names: []string{"spec.region", `"westeurope"`, `"northeurope"`, azureprovider.AccountName(ours)}},

		// Deletion with wrong inputs.
		{Name: "entry deletion: wrong storageKey", Data: badinput.With(good, "storageKey", wrongKey), Run: e.deleteEntry(false, fresh()), Want: objectstore.ErrUnauthenticated, Or: azuriteRefusal, Names: []string{`"storageKey"`}},
		{Name: "entry deletion: storageKey not base64", Data: badinput.With(good, "storageKey", "not-base64-key-value!"), Run: e.deleteEntry(false, fresh()), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageKey"`}},
		{Name: "entry deletion: domain with a trailing newline", Data: badinput.With(good, "domain", azurite.Host+"\n"), Run: e.deleteEntry(false, fresh()), Want: objectstore.ErrInvalidConfig, Names: []string{`"domain"`}},
		{Name: "entry deletion: client secret Entra ID refuses", Data: badinput.With(sp, "clientSecret", "not-the-client-secret-value"), Run: e.deleteEntry(true, ours), Want: objectstore.ErrUnauthenticated, Names: []string{`"clientSecret"`}},
		{Name: "entry deletion: service principal without clientSecret", Data: badinput.Without(sp, "clientSecret"), Run: e.deleteEntry(true, ours), Want: objectstore.ErrInvalidConfig, Names: []string{`"clientSecret"`}},
		{Name: "bucket deletion: wrong storageKey", Data: badinput.With(good, "storageKey", wrongKey), Run: e.deleteBucket(false, false, fresh()), Want: objectstore.ErrUnauthenticated, Or: azuriteRefusal, Names: []string{`"storageKey"`}},
		{Name: "bucket deletion: client secret Entra ID refuses", Data: badinput.With(sp, "clientSecret", "not-the-client-secret-value"), Run: e.deleteBucket(true, false, ours), Want: objectstore.ErrUnauthenticated, Names: []string{`"clientSecret"`}},
		{Name: "bucket deletion: workload identity without token", Data: badinput.Without(wi, "token"), Run: e.deleteBucket(true, true, ours), Want: objectstore.ErrInvalidConfig, Names: []string{`"token"`}},

		// etcd-backup: what etcd-backup-restore v0.43.0 could not use is refused.
		{Name: "etcd-backup: no storageAccount", Data: badinput.Without(etcd, "storageAccount"), Run: writeAzureEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAccount"`}},
		{Name: "etcd-backup: empty storageKey", Data: badinput.With(etcd, "storageKey", ""), Run: writeAzureEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"storageKey"`}},
		{Name: "etcd-backup: storageKey not base64", Data: badinput.With(etcd, "storageKey", "not-base64-key-value!"), Run: writeAzureEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"storageKey"`}},
		{Name: "etcd-backup: storageAccount with a trailing newline", Data: badinput.With(etcd, "storageAccount", azurestack.AzuriteAccount+"\n"), Run: writeAzureEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAccount"`}},
		{Name: "etcd-backup: domain with a trailing newline", Data: badinput.With(etcd, "domain", azurite.Host+"\n"), Run: writeAzureEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"domain"`}},
		{Name: "etcd-backup: bucketName breaks the container naming rules", Data: badinput.With(etcd, "bucketName", "Backup_Bucket"), Run: writeAzureEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"bucketName"`, "lowercase"}},
		{Name: "etcd-backup: bucketName with a trailing newline", Data: badinput.With(etcd, "bucketName", "geb-bad-input\n"), Run: writeAzureEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"bucketName"`}},
		{Name: "etcd-backup: domain with a scheme", Data: badinput.With(badinput.Without(etcd, "emulatorEnabled"), "domain", "https://blob.core.windows.net"), Run: writeAzureEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"domain"`}},
	}

	// Names: every Azure container naming rule, checked before any request, on both planes.
	for _, n := range []struct{ name, bucket, rule string }{
		{"longer than 63 characters", strings.Repeat("a", 64), "63"},
		{"shorter than 3 characters", "ab", "3 to 63"},
		{"uppercase", "Backup-Bucket", "lowercase"},
		{"an underscore", "backup_bucket", "lowercase"},
		{"a dot", "backup.bucket", "lowercase"},
		{"a leading dash", "-backup", "begin"},
		{"a trailing dash", "backup-", "end with a dash"},
		{"two consecutive dashes", "backup--bucket", "consecutive"},
		{"the root container", "$root", "lowercase"},
	} {
		cases = append(cases,
			badinput.Case{Name: "container name: " + n.name, Data: good, Run: e.reconcile(false, false, n.bucket, "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{n.bucket, n.rule, "BackupBucket's name"}},
			badinput.Case{Name: "container name, management plane: " + n.name, Data: sp, Run: e.reconcile(true, false, n.bucket, "westeurope", ""), Want: objectstore.ErrInvalidConfig, Names: []string{n.bucket, n.rule, "BackupBucket's name"}})
	}
	for _, bucket := range []string{"Backup-Bucket", "backup--bucket", "backup-"} {
		cases = append(cases,
			badinput.Case{Name: "entry deletion: spec.bucketName " + bucket, Data: good, Run: e.deleteEntry(false, bucket), Want: objectstore.ErrInvalidConfig, Names: []string{bucket, "spec.bucketName"}},
			badinput.Case{Name: "entry deletion, management plane: spec.bucketName " + bucket, Data: sp, Run: e.deleteEntry(true, bucket), Want: objectstore.ErrInvalidConfig, Names: []string{bucket, "spec.bucketName"}},
			badinput.Case{Name: "bucket deletion: " + bucket, Data: good, Run: e.deleteBucket(false, false, bucket), Want: objectstore.ErrInvalidConfig, Names: []string{bucket, "spec.bucketName"}},
			badinput.Case{Name: "bucket deletion, management plane: " + bucket, Data: sp, Run: e.deleteBucket(true, false, bucket), Want: objectstore.ErrInvalidConfig, Names: []string{bucket, "spec.bucketName"}})
	}
	const badName = "Backup_Bucket"
	for _, plane := range []bool{false, true} {
		data := good
		if plane {
			data = sp
		}
		for name, call := range map[string]func(conformance.Stores) error{
			"PutObject": func(s conformance.Stores) error { return s.PutObject(context.Background(), badName, "k", []byte("v")) },
			"OpenObject": func(s conformance.Stores) error {
				_, err := s.OpenObject(context.Background(), badName, "k", "")
				return err
			},
			"DeleteObjects": func(s conformance.Stores) error {
				_, err := s.DeleteObjects(context.Background(), badName, []objectstore.ObjectVersion{{Key: "k"}})
				return err
			},
			"DeferDeletion": func(s conformance.Stores) error {
				_, err := s.DeferDeletion(context.Background(), badName, "shoot--garden--x/")
				return err
			},
		} {
			cases = append(cases, badinput.Case{Name: fmt.Sprintf("container name on %s (management plane %v)", name, plane), Data: data, Run: e.onStore(plane, call), Want: objectstore.ErrInvalidConfig, Names: []string{badName, "spec.bucketName"}})
		}
	}

	badinput.Run(t, badinput.Harness{AtLeast: 30,
		// Azurite's containers, and the ARM stand-in's writes.
		State: func(t *testing.T) []string {
			return append(containerNames(t), fmt.Sprintf("ARM stand-in writes: %d", arm.Writes()))
		},
		Secrets: func(data map[string][]byte) []string {
			values := append([]string{arm.ClientSecret, azurestack.AzuriteKey}, azurestack.StandInKeys[:]...)
			for _, k := range secretValues {
				if v := strings.TrimSpace(string(data[k])); len(v) > 3 {
					values = append(values, v)
				}
			}
			return values
		}}, cases)
}

// An entry whose container does not exist: the store says so with the container's name, and the
// deletion engine takes it as nothing left to delete (objectstore.DeletePrefix); nothing is
// created, on either plane.
func TestEntryDeletionInAMissingContainer(t *testing.T) {
	arm := startARM(t)
	e := badInputEnv{arm: arm}
	for _, plane := range []bool{false, true} {
		t.Run(fmt.Sprintf("management plane %v", plane), func(t *testing.T) {
			data := azurite.SecretData()
			if plane {
				data = arm.ServicePrincipal()
			}
			name := newBucketName()
			before, writes := containerNames(t), arm.Writes()
			err := e.onStore(plane, func(s conformance.Stores) error {
				return s.ListObjects(context.Background(), name, "shoot--garden--x/", func([]objectstore.ObjectVersion) error { return nil })
			})(t, data)
			if !errors.Is(err, objectstore.ErrBucketNotFound) || !strings.Contains(err.Error(), name) {
				t.Fatalf("got %v; want ErrBucketNotFound naming %q", err, name)
			}
			if err := e.deleteEntry(plane, name)(t, data); err != nil {
				t.Fatalf("got %v; a missing container leaves nothing to delete", err)
			}
			if after := containerNames(t); !slices.Equal(before, after) {
				t.Fatalf("Azurite's containers changed: before %v, after %v", before, after)
			}
			if w := arm.Writes(); w != writes {
				t.Fatalf("the management plane recorded %d writes", w-writes)
			}
		})
	}
}

// containerNames lists the containers of Azurite's two accounts (the operator's and the one the
// ARM stand-in's accounts share).
func containerNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for acct, key := range map[string]string{azurestack.AzuriteAccount: azurestack.AzuriteKey, azurestack.StandInAccount: azurestack.StandInKeys[0]} {
		cred, err := azblob.NewSharedKeyCredential(acct, key)
		if err != nil {
			t.Fatal(err)
		}
		c, err := azblob.NewClientWithSharedKeyCredential(fmt.Sprintf("http://%s/%s/", azurite.Host, acct), cred, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{}})
		if err != nil {
			t.Fatal(err)
		}
		pager := c.NewListContainersPager(nil)
		for pager.More() {
			page, err := pager.NextPage(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.ContainerItems {
				names = append(names, acct+"/"+*it.Name)
			}
		}
	}
	slices.Sort(names)
	return names
}
