// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// badInput is one wrong input: what the extension does with it (decode a providerConfig, build a
// store and reconcile a bucket, delete an entry's prefix or a bucket, write etcd-backup), the
// sentinel it must answer with (which pkg/controller maps to a Gardener error code), and what the
// message must name. Every case also checks that no secret value is in the message, that
// Azurite's accounts hold the same containers before and after, and that the ARM stand-in
// recorded no write.
type badInput struct {
	name  string
	data  map[string][]byte // the secret involved, if any: none of its secret values may appear
	run   func(t *testing.T, data map[string][]byte) error
	want  []error // one of these (Azurite answers some refusals differently from Azure)
	names []string
}

const azureConfigHead = "apiVersion: azure.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"

func azureConfigCase(name, raw string, names ...string) badInput {
	return badInput{name: "providerConfig: " + name, want: []error{objectstore.ErrInvalidConfig}, names: names,
		run: func(t *testing.T, _ map[string][]byte) error {
			_, err := azureapi.API.DecodeBucketConfig([]byte(raw))
			wantConfigurationProblem(t, err)
			return err
		}}
}

// wantConfigurationProblem checks that pkg/controller reports err with Gardener's
// ERR_CONFIGURATION_PROBLEM, the code a wrong providerConfig must carry.
func wantConfigurationProblem(t *testing.T, err error) {
	t.Helper()
	if codes := lasterror.Codes(err); !slices.Equal(codes, []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) {
		t.Errorf("Gardener error codes %v; want %s", codes, gardencorev1beta1.ErrorConfigurationProblem)
	}
}

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
		prefix, err := objectstore.EntryPrefix("shoot--garden--bad-input")
		if err != nil {
			return err
		}
		_, err = objectstore.DeletePrefix(context.Background(), s, bucket, prefix, objectstore.DeleteOptions{})
		return err
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

// set returns a copy of data with key set to value (an empty value is kept as empty).
func set(data map[string][]byte, key, value string) map[string][]byte {
	out := maps.Clone(data)
	out[key] = []byte(value)
	return out
}

func drop(data map[string][]byte, key string) map[string][]byte {
	out := maps.Clone(data)
	delete(out, key)
	return out
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
	etcd := set(good, "bucketName", "geb-bad-input")
	sp := arm.ServicePrincipal()
	wi := arm.WorkloadIdentity()
	fresh := newBucketName
	invalid := []error{objectstore.ErrInvalidConfig}
	// A well-formed key that is not the account's: Azure answers 403 AuthenticationFailed
	// (ErrUnauthenticated); Azurite answers 403 AuthorizationFailure (ErrForbidden).
	refused := []error{objectstore.ErrUnauthenticated, objectstore.ErrForbidden}
	wrongKey := "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ=="
	wiCfg := func(body string) string {
		return "apiVersion: azure.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\n" + body
	}
	wiBody := fmt.Sprintf("clientID: %s\ntenantID: %s\nsubscriptionID: %s\n", arm.ClientID, arm.TenantID, arm.SubscriptionID)

	// The rows every provider shares (apiVersion, kind, strict decoding, backupFreshness, bucket
	// names no store takes) are pkg/provider/all's TestSharedBadInput, run on every registered API.
	cases := []badInput{
		// providerConfig: strict decoding, every error with its field path.
		azureConfigCase("unknown field", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  extra: 1\n", "providerConfig", "immutability.extra"),
		azureConfigCase("unknown top-level field", azureConfigHead+"versioning: true\n", "providerConfig", "versioning"),
		azureConfigCase("wrong apiVersion", "apiVersion: azure.provider.extensions.gardener.cloud/v1beta1\nkind: BackupBucketConfig\n", "providerConfig.apiVersion"),
		azureConfigCase("another provider's apiVersion", "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n", "providerConfig.apiVersion"),
		azureConfigCase("object given as a boolean", azureConfigHead+"immutability: yes\n", "providerConfig.immutability", "must be an object"),
		azureConfigCase("string given as a number", azureConfigHead+"storageAccount:\n  skuName: 3\n", "providerConfig.storageAccount.skuName", "must be a string"),
		azureConfigCase("boolean given as a string", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  locked: maybe\n", "providerConfig.immutability.locked", "must be true or false"),
		azureConfigCase("integer given as a string", azureConfigHead+"softDelete:\n  blobRetentionDays: seven\n  containerRetentionDays: 7\n", "providerConfig.softDelete.blobRetentionDays"),
		azureConfigCase("duration given as a number", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24\n", "providerConfig.immutability.retentionPeriod"),
		azureConfigCase("unparseable duration", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: forever\n", "providerConfig.immutability.retentionPeriod"),
		azureConfigCase("negative duration", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: -48h\n", "providerConfig.immutability.retentionPeriod"),
		azureConfigCase("duration not whole days", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 30h\n", "providerConfig.immutability.retentionPeriod"),
		azureConfigCase("unknown retention type", azureConfigHead+"immutability:\n  retentionType: object\n  retentionPeriod: 24h\n", "providerConfig.immutability.retentionType"),
		azureConfigCase("unknown skuName", azureConfigHead+"storageAccount:\n  skuName: Standard_XRS\n", "providerConfig.storageAccount.skuName", "Standard_ZRS"),
		azureConfigCase("premium skuName", azureConfigHead+"storageAccount:\n  skuName: Premium_LRS\n", "providerConfig.storageAccount.skuName"),
		azureConfigCase("unknown cloud", azureConfigHead+"cloudConfiguration:\n  name: AzureStack\n", "providerConfig.cloudConfiguration.name"),
		azureConfigCase("negative soft delete days", azureConfigHead+"softDelete:\n  blobRetentionDays: -1\n  containerRetentionDays: 7\n", "providerConfig.softDelete.blobRetentionDays"),
		azureConfigCase("soft delete beyond 365 days", azureConfigHead+"softDelete:\n  blobRetentionDays: 7\n  containerRetentionDays: 400\n", "providerConfig.softDelete.containerRetentionDays"),
		azureConfigCase("unparseable rotation period", azureConfigHead+"rotation:\n  period: monthly\n", "providerConfig.rotation.period"),

		// providerConfig settings an account key cannot honour: refused before any request.
		{name: "account key: immutability", data: good, run: e.reconcile(false, false, fresh(), "westeurope", azureConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n"),
			want: invalid, names: []string{"spec.providerConfig.immutability", `"storageKey"`}},
		{name: "account key: handBack", data: good, run: e.reconcile(false, false, fresh(), "westeurope", azureConfigHead+"handBack: true\n"),
			want: invalid, names: []string{"spec.providerConfig.handBack", `"storageKey"`}},
		{name: "account key: softDelete", data: good, run: e.reconcile(false, false, fresh(), "westeurope", azureConfigHead+"softDelete:\n  blobRetentionDays: 7\n  containerRetentionDays: 7\n"),
			want: invalid, names: []string{"spec.providerConfig.softDelete", `"storageKey"`}},
		{name: "account key: skuName", data: good, run: e.reconcile(false, false, fresh(), "westeurope", azureConfigHead+"storageAccount:\n  skuName: Standard_LRS\n"),
			want: invalid, names: []string{"spec.providerConfig.storageAccount.skuName"}},
		{name: "account key: cloudConfiguration of another cloud than the secret's domain", data: drop(drop(good, "emulatorEnabled"), "domain"), run: e.storeOnly(azureConfigHead + "cloudConfiguration:\n  name: AzureChina\n"),
			want: invalid, names: []string{"spec.providerConfig.cloudConfiguration.name", `"domain"`, "blob.core.chinacloudapi.cn"}},
		{name: "account key: cloudConfiguration with a domain of another cloud", data: set(drop(good, "emulatorEnabled"), "domain", "blob.core.chinacloudapi.cn"), run: e.storeOnly(azureConfigHead + "cloudConfiguration:\n  name: AzureGovernment\n"),
			want: invalid, names: []string{"spec.providerConfig.cloudConfiguration.name", `"domain"`, "blob.core.usgovcloudapi.net"}},
		{name: "account key: rotation", data: good, run: e.reconcile(false, false, fresh(), "westeurope", azureConfigHead+"rotation:\n  period: 720h\n"),
			want: invalid, names: []string{"spec.providerConfig.rotation"}},

		// Account key secrets, on bucket reconcile.
		{name: "secret: no storageAccount", data: drop(good, "storageAccount"), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"storageAccount"`}},
		{name: "secret: empty storageAccount", data: set(good, "storageAccount", ""), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"storageAccount"`}},
		{name: "secret: no storageKey", data: drop(good, "storageKey"), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"storageKey"`}},
		{name: "secret: empty storageKey", data: set(good, "storageKey", ""), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"storageKey"`}},
		{name: "secret: storageKey not base64", data: set(good, "storageKey", "not-base64-key-value!"), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"storageKey"`, "base64"}},
		{name: "secret: storageAccount uppercase", data: set(good, "storageAccount", "DevStoreAccount1"), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"storageAccount"`, "3 to 24"}},
		{name: "secret: storageAccount with a trailing newline", data: set(good, "storageAccount", azurestack.AzuriteAccount+"\n"), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"storageAccount"`}},
		{name: "secret: wrong storageKey", data: set(good, "storageKey", wrongKey), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: refused, names: []string{`"storageAccount"`, `"storageKey"`}},
		{name: "secret: domain with a path", data: set(good, "domain", azurite.Host+"/x"), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"domain"`}},
		{name: "secret: domain with a scheme", data: set(drop(good, "emulatorEnabled"), "domain", "https://blob.core.windows.net"), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"domain"`}},
		{name: "secret: domain with a trailing newline", data: set(good, "domain", azurite.Host+"\n"), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"domain"`}},
		{name: "secret: emulatorEnabled on a non-loopback host", data: set(good, "domain", "blob.example.com:10000"), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"emulatorEnabled"`, "loopback"}},
		{name: "secret: emulatorEnabled not a boolean", data: set(good, "emulatorEnabled", "yes"), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"emulatorEnabled"`}},
		{name: "secret: emulatorEnabled without a domain", data: drop(good, "domain"), run: e.reconcile(false, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"domain"`, `"emulatorEnabled"`}},

		// Service principal secrets.
		{name: "service principal: no clientSecret", data: drop(sp, "clientSecret"), run: e.reconcile(true, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"clientSecret"`}},
		{name: "service principal: empty tenantID", data: set(sp, "tenantID", ""), run: e.reconcile(true, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"tenantID"`}},
		{name: "service principal: no subscriptionID", data: drop(sp, "subscriptionID"), run: e.reconcile(true, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"subscriptionID"`}},
		{name: "service principal: no clientID", data: drop(sp, "clientID"), run: e.reconcile(true, false, fresh(), "westeurope", ""), want: invalid, names: []string{`"clientID"`}},
		{name: "service principal: client secret Entra ID refuses", data: set(sp, "clientSecret", "not-the-client-secret-value"), run: e.reconcile(true, false, fresh(), "westeurope", ""),
			want: []error{objectstore.ErrUnauthenticated}, names: []string{`"clientSecret"`, `"tenantID"`, `"clientID"`}},
		{name: "mix: service principal and account key", data: set(set(sp, "storageAccount", azurestack.AzuriteAccount), "storageKey", azurestack.AzuriteKey), run: e.reconcile(true, false, fresh(), "westeurope", ""),
			want: invalid, names: []string{`"clientSecret"`, `"storageKey"`}},
		{name: "mix: part of a service principal with an account key", data: set(good, "tenantID", arm.TenantID), run: e.reconcile(false, false, fresh(), "westeurope", ""),
			want: invalid, names: []string{`"tenantID"`, `"storageKey"`}},

		// Workload identity secrets.
		{name: "workload identity: no token", data: drop(wi, "token"), run: e.reconcile(true, true, fresh(), "westeurope", ""), want: invalid, names: []string{`"token"`}},
		{name: "workload identity: empty token", data: set(wi, "token", " \n"), run: e.reconcile(true, true, fresh(), "westeurope", ""), want: invalid, names: []string{`"token"`}},
		{name: "workload identity: no config", data: drop(wi, "config"), run: e.reconcile(true, true, fresh(), "westeurope", ""), want: invalid, names: []string{`"config"`}},
		{name: "workload identity: config of the wrong kind", data: set(wi, "config", "apiVersion: azure.provider.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"), run: e.reconcile(true, true, fresh(), "westeurope", ""), want: invalid, names: []string{"config.kind"}},
		{name: "workload identity: config without subscriptionID", data: set(wi, "config", wiCfg(fmt.Sprintf("clientID: %s\ntenantID: %s\n", arm.ClientID, arm.TenantID))), run: e.reconcile(true, true, fresh(), "westeurope", ""), want: invalid, names: []string{"config.subscriptionID"}},
		{name: "workload identity: config with an unknown field", data: set(wi, "config", wiCfg(wiBody+"clientSecret: x\n")), run: e.reconcile(true, true, fresh(), "westeurope", ""), want: invalid, names: []string{"config", "clientSecret"}},
		{name: "workload identity: token Entra ID refuses", data: set(wi, "token", "not-the-workload-identity-token"), run: e.reconcile(true, true, fresh(), "westeurope", ""),
			want: []error{objectstore.ErrUnauthenticated}, names: []string{`"token"`}},
		{name: "mix: workload identity with a client secret", data: set(wi, "clientSecret", "a-client-secret-value"), run: e.reconcile(true, true, fresh(), "westeurope", ""),
			want: invalid, names: []string{`"clientSecret"`, `"token"`}},
		{name: "mix: workload identity with an account key", data: set(wi, "storageKey", azurestack.AzuriteKey), run: e.reconcile(true, true, fresh(), "westeurope", ""),
			want: invalid, names: []string{`"storageKey"`, `"token"`}},

		// Regions.
		{name: "region: spec.region empty", data: sp, run: e.reconcile(true, false, fresh(), "", ""), want: invalid, names: []string{"spec.region"}},
		{name: "region: an account of ours in another location", data: sp, run: e.reconcile(true, false, ours, "northeurope", ""), want: invalid,
			names: []string{"spec.region", `"westeurope"`, `"northeurope"`, azureprovider.AccountName(ours)}},

		// Deletion with wrong inputs.
		{name: "entry deletion: wrong storageKey", data: set(good, "storageKey", wrongKey), run: e.deleteEntry(false, fresh()), want: refused, names: []string{`"storageKey"`}},
		{name: "entry deletion: storageKey not base64", data: set(good, "storageKey", "not-base64-key-value!"), run: e.deleteEntry(false, fresh()), want: invalid, names: []string{`"storageKey"`}},
		{name: "entry deletion: domain with a trailing newline", data: set(good, "domain", azurite.Host+"\n"), run: e.deleteEntry(false, fresh()), want: invalid, names: []string{`"domain"`}},
		{name: "entry deletion: client secret Entra ID refuses", data: set(sp, "clientSecret", "not-the-client-secret-value"), run: e.deleteEntry(true, ours), want: []error{objectstore.ErrUnauthenticated}, names: []string{`"clientSecret"`}},
		{name: "entry deletion: service principal without clientSecret", data: drop(sp, "clientSecret"), run: e.deleteEntry(true, ours), want: invalid, names: []string{`"clientSecret"`}},
		{name: "bucket deletion: wrong storageKey", data: set(good, "storageKey", wrongKey), run: e.deleteBucket(false, false, fresh()), want: refused, names: []string{`"storageKey"`}},
		{name: "bucket deletion: client secret Entra ID refuses", data: set(sp, "clientSecret", "not-the-client-secret-value"), run: e.deleteBucket(true, false, ours), want: []error{objectstore.ErrUnauthenticated}, names: []string{`"clientSecret"`}},
		{name: "bucket deletion: workload identity without token", data: drop(wi, "token"), run: e.deleteBucket(true, true, ours), want: invalid, names: []string{`"token"`}},

		// etcd-backup: what etcd-backup-restore v0.43.0 could not use is refused.
		{name: "etcd-backup: no storageAccount", data: drop(etcd, "storageAccount"), run: writeAzureEtcdBackup, want: invalid, names: []string{`"storageAccount"`}},
		{name: "etcd-backup: empty storageKey", data: set(etcd, "storageKey", ""), run: writeAzureEtcdBackup, want: invalid, names: []string{`"storageKey"`}},
		{name: "etcd-backup: storageKey not base64", data: set(etcd, "storageKey", "not-base64-key-value!"), run: writeAzureEtcdBackup, want: invalid, names: []string{`"storageKey"`}},
		{name: "etcd-backup: storageAccount with a trailing newline", data: set(etcd, "storageAccount", azurestack.AzuriteAccount+"\n"), run: writeAzureEtcdBackup, want: invalid, names: []string{`"storageAccount"`}},
		{name: "etcd-backup: domain with a trailing newline", data: set(etcd, "domain", azurite.Host+"\n"), run: writeAzureEtcdBackup, want: invalid, names: []string{`"domain"`}},
		{name: "etcd-backup: bucketName breaks the container naming rules", data: set(etcd, "bucketName", "Backup_Bucket"), run: writeAzureEtcdBackup, want: invalid, names: []string{`"bucketName"`, "lowercase"}},
		{name: "etcd-backup: bucketName with a trailing newline", data: set(etcd, "bucketName", "geb-bad-input\n"), run: writeAzureEtcdBackup, want: invalid, names: []string{`"bucketName"`}},
		{name: "etcd-backup: domain with a scheme", data: set(drop(etcd, "emulatorEnabled"), "domain", "https://blob.core.windows.net"), run: writeAzureEtcdBackup, want: invalid, names: []string{`"domain"`}},
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
			badInput{name: "container name: " + n.name, data: good, run: e.reconcile(false, false, n.bucket, "westeurope", ""), want: invalid, names: []string{n.bucket, n.rule, "BackupBucket's name"}},
			badInput{name: "container name, management plane: " + n.name, data: sp, run: e.reconcile(true, false, n.bucket, "westeurope", ""), want: invalid, names: []string{n.bucket, n.rule, "BackupBucket's name"}})
	}
	for _, bucket := range []string{"Backup-Bucket", "backup--bucket", "backup-"} {
		cases = append(cases,
			badInput{name: "entry deletion: spec.bucketName " + bucket, data: good, run: e.deleteEntry(false, bucket), want: invalid, names: []string{bucket, "spec.bucketName"}},
			badInput{name: "entry deletion, management plane: spec.bucketName " + bucket, data: sp, run: e.deleteEntry(true, bucket), want: invalid, names: []string{bucket, "spec.bucketName"}},
			badInput{name: "bucket deletion: " + bucket, data: good, run: e.deleteBucket(false, false, bucket), want: invalid, names: []string{bucket, "spec.bucketName"}},
			badInput{name: "bucket deletion, management plane: " + bucket, data: sp, run: e.deleteBucket(true, false, bucket), want: invalid, names: []string{bucket, "spec.bucketName"}})
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
			cases = append(cases, badInput{name: fmt.Sprintf("container name on %s (management plane %v)", name, plane), data: data, run: e.onStore(plane, call), want: invalid, names: []string{badName, "spec.bucketName"}})
		}
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, writes := containerNames(t), arm.Writes()
			err := c.run(t, c.data)
			if !slices.ContainsFunc(c.want, func(w error) bool { return errors.Is(err, w) }) {
				t.Fatalf("got %v; want one of %v", err, c.want)
			}
			t.Log(err)
			for _, n := range c.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("the message does not name %s: %v", n, err)
				}
			}
			for _, k := range secretValues {
				if v := strings.TrimSpace(string(c.data[k])); len(v) > 3 && strings.Contains(err.Error(), v) {
					t.Errorf("the message reveals the value of the secret key %q: %v", k, err)
				}
			}
			for _, v := range append([]string{arm.ClientSecret, azurestack.AzuriteKey}, azurestack.StandInKeys[:]...) {
				if strings.Contains(err.Error(), v) {
					t.Errorf("the message reveals a secret value: %v", err)
				}
			}
			if after := containerNames(t); !slices.Equal(before, after) {
				t.Errorf("Azurite's containers changed: before %v, after %v", before, after)
			}
			if w := arm.Writes(); w != writes {
				t.Errorf("the management plane recorded %d writes: %v", w-writes, arm.Requests("PUT", "PATCH", "DELETE", "POST")[writes:])
			}
		})
	}
	if len(cases) < 30 {
		t.Fatalf("only %d wrong inputs", len(cases))
	}
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
