// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestDecodeBackupBucketConfig(t *testing.T) {
	const head = "apiVersion: azure.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
	cases := []struct {
		name    string
		raw     string
		region  string
		wantErr string // a substring naming the field path; empty: valid
		check   func(*testing.T, *azure.BackupBucketConfig, string)
	}{
		{name: "empty gives defaults", raw: "", region: "westeurope", check: func(t *testing.T, c *azure.BackupBucketConfig, region string) {
			if c.SKU() != "Standard_ZRS" || c.CloudName(region) != azure.CloudAzurePublic || c.GenerationSettings().Rotation.RotationPeriod() != 0 || c.GenerationSettings().Rotation.Grace() != 7*24*time.Hour {
				t.Fatalf("defaults: sku %s, cloud %s, period %v, grace %v", c.SKU(), c.CloudName(region), c.GenerationSettings().Rotation.RotationPeriod(), c.GenerationSettings().Rotation.Grace())
			}
		}},
		{name: "china by region", raw: "", region: "chinanorth3", check: func(t *testing.T, c *azure.BackupBucketConfig, region string) {
			if c.CloudName(region) != azure.CloudAzureChina {
				t.Fatalf("cloud %s", c.CloudName(region))
			}
		}},
		{name: "government by region", raw: "", region: "usgovvirginia", check: func(t *testing.T, c *azure.BackupBucketConfig, region string) {
			if c.CloudName(region) != azure.CloudAzureGovernment {
				t.Fatalf("cloud %s", c.CloudName(region))
			}
		}},
		{name: "everything set", region: "westeurope", raw: head + "cloudConfiguration:\n  name: AzureChina\nstorageAccount:\n  skuName: Standard_GRS\nrotation:\n  period: 720h\n  gracePeriod: 0s\nimmutability:\n  retentionType: bucket\n  retentionPeriod: 48h\n  locked: true\n",
			check: func(t *testing.T, c *azure.BackupBucketConfig, region string) {
				if c.SKU() != "Standard_GRS" || c.CloudName(region) != azure.CloudAzureChina || c.GenerationSettings().Rotation.RotationPeriod() != 720*time.Hour || c.GenerationSettings().Rotation.Grace() != 0 || !c.Immutability.Locked {
					t.Fatalf("got %+v", c)
				}
			}},
		{name: "provider-azure apiVersion", raw: `{"apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig"}`},
		{name: "unknown cloud", raw: head + "cloudConfiguration:\n  name: AzureMoon\n", wantErr: "providerConfig.cloudConfiguration.name"},
		{name: "every field of provider-azure's served API, its cloud name in any case as it accepts it", region: "westeurope",
			raw: `{"apiVersion":"azure.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","cloudConfiguration":{"name":"azuregovernment"},"immutability":{"retentionType":"bucket","retentionPeriod":"48h","locked":false},"rotationConfig":{"rotationPeriodDays":7,"expirationPeriodDays":14}}`,
			check: func(t *testing.T, c *azure.BackupBucketConfig, region string) {
				if c.CloudName(region) != azure.CloudAzureGovernment || c.CloudConfiguration.Name != azure.CloudAzureGovernment || c.Immutability == nil || c.GenerationSettings().Rotation.RotationPeriod() != 7*24*time.Hour {
					t.Fatalf("got %+v, cloud %s", c, c.CloudName(region))
				}
			}},
		{name: "premium sku", raw: head + "storageAccount:\n  skuName: Premium_LRS\n", wantErr: "providerConfig.storageAccount.skuName"},
		{name: "period under an hour", raw: head + "rotation:\n  period: 30m\n", wantErr: "providerConfig.rotation.period"},
		{name: "negative grace", raw: head + "rotation:\n  gracePeriod: -1h\n", wantErr: "providerConfig.rotation.gracePeriod"},
		{name: "grace not shorter than period", raw: head + "rotation:\n  period: 24h\n  gracePeriod: 24h\n", wantErr: "providerConfig.rotation.gracePeriod"},
		{name: "period not whole days", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 36h\n", wantErr: "providerConfig.immutability.retentionPeriod"},
		{name: "unknown retention type", raw: head + "immutability:\n  retentionType: object\n  retentionPeriod: 24h\n", wantErr: "providerConfig.immutability.retentionType"},
		{name: "unknown field", raw: head + "storageAccount:\n  tier: hot\n", wantErr: `unknown field "storageAccount.tier"`},
		{name: "provider-azure's rotationConfig is read as rotation", raw: head + "rotationConfig:\n  rotationPeriodDays: 7\n  expirationPeriodDays: 14\n",
			check: func(t *testing.T, c *azure.BackupBucketConfig, _ string) {
				r := c.GenerationSettings().Rotation
				if r.RotationPeriod() != 7*24*time.Hour || r.Grace() != 6*24*time.Hour {
					t.Fatalf("rotationConfig read as period %v, grace %v; want 168h and 144h", r.RotationPeriod(), r.Grace())
				}
			}},
		{name: "rotationConfig under 2 days", raw: head + "rotationConfig:\n  rotationPeriodDays: 1\n", wantErr: "providerConfig.rotationConfig.rotationPeriodDays"},
		{name: "rotationConfig expiring before its period", raw: head + "rotationConfig:\n  rotationPeriodDays: 7\n  expirationPeriodDays: 7\n", wantErr: "providerConfig.rotationConfig.expirationPeriodDays"},
		{name: "rotationConfig and rotation", raw: head + "rotation:\n  period: 720h\nrotationConfig:\n  rotationPeriodDays: 7\n", wantErr: "providerConfig.rotationConfig"},
		{name: "hand back", raw: head + "handBack: true\n", check: func(t *testing.T, c *azure.BackupBucketConfig, _ string) {
			if !c.HandBack {
				t.Fatalf("handBack not decoded: %+v", c)
			}
		}},
		{name: "hand back not a boolean", raw: head + "handBack: later\n", wantErr: "handBack"},
		{name: "soft delete", raw: head + "softDelete:\n  blobRetentionDays: 7\n  containerRetentionDays: 0\n"},
		{name: "soft delete too long", raw: head + "softDelete:\n  blobRetentionDays: 400\n", wantErr: "providerConfig.softDelete.blobRetentionDays"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := azure.DecodeBackupBucketConfig([]byte(c.raw))
			if c.wantErr != "" {
				if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v; want ErrInvalidConfig naming %s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.check != nil {
				c.check(t, cfg, c.region)
			}
		})
	}
}

func TestDecodeWorkloadIdentityConfig(t *testing.T) {
	const head = "apiVersion: azure.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\n"
	cases := []struct{ name, raw, wantErr string }{
		{"complete", head + "clientID: c\ntenantID: t\nsubscriptionID: s\n", ""},
		{"no subscription", head + "clientID: c\ntenantID: t\n", "config.subscriptionID"},
		{"wrong kind", "apiVersion: azure.provider.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n", "kind"},
		{"unknown field", head + "clientID: c\ntenantID: t\nsubscriptionID: s\nclientSecret: x\n", "clientSecret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := azure.DecodeWorkloadIdentityConfig([]byte(c.raw))
			if c.wantErr == "" && err != nil || c.wantErr != "" && (!errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("got %v; want error naming %q", err, c.wantErr)
			}
		})
	}
}
