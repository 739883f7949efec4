// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestDecodeBackupBucketConfig(t *testing.T) {
	const head = "apiVersion: gcp.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
	cases := []struct {
		name    string
		raw     string
		wantErr string // a substring naming the field path; empty: valid
		check   func(*testing.T, *gcp.BackupBucketConfig)
	}{
		{name: "empty gives defaults", raw: " \n", check: func(t *testing.T, c *gcp.BackupBucketConfig) {
			if c.Immutability != nil || c.SoftDelete != nil || len(c.Labels) != 0 {
				t.Fatalf("defaults expected, got %+v", c)
			}
		}},
		{name: "locked immutability", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 96h\n  locked: true\n",
			check: func(t *testing.T, c *gcp.BackupBucketConfig) {
				if c.Immutability.RetentionPeriod.Duration != 96*time.Hour || !c.Immutability.Locked {
					t.Fatalf("got %+v", c.Immutability)
				}
			}},
		{name: "provider-gcp apiVersion is accepted", raw: `{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h","locked":false}}`},
		{name: "soft delete", raw: head + "softDelete:\n  retentionDuration: 168h\n", check: func(t *testing.T, c *gcp.BackupBucketConfig) {
			if c.SoftDelete.RetentionDuration.Duration != 7*24*time.Hour {
				t.Fatalf("got %+v", c.SoftDelete)
			}
		}},
		{name: "soft delete off", raw: head + "softDelete:\n  retentionDuration: 0s\n"},
		{name: "provider-gcp's store.endpointOverride, every field of its served API", raw: `{"apiVersion":"gcp.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h","locked":true},"store":{"endpointOverride":"https://storage.me-central2.rep.googleapis.com"}}`,
			check: func(t *testing.T, c *gcp.BackupBucketConfig) {
				if got := c.StoreEndpointOverride(); got != "https://storage.me-central2.rep.googleapis.com" {
					t.Fatalf("StoreEndpointOverride = %q", got)
				}
			}},
		{name: "no store: no endpoint override", raw: head, check: func(t *testing.T, c *gcp.BackupBucketConfig) {
			if got := c.StoreEndpointOverride(); got != "" {
				t.Fatalf("StoreEndpointOverride = %q", got)
			}
		}},
		{name: "store.endpointOverride over http", raw: head + "store:\n  endpointOverride: http://storage.example\n", wantErr: "providerConfig.store.endpointOverride: Invalid value: \"http://storage.example\": must use the https scheme"},
		{name: "store.endpointOverride not absolute", raw: head + "store:\n  endpointOverride: storage.example\n", wantErr: "providerConfig.store.endpointOverride: Invalid value: \"storage.example\": must be an absolute https URL"},
		{name: "store.endpointOverride with credentials", raw: head + "store:\n  endpointOverride: https://u:p@storage.example\n", wantErr: "providerConfig.store.endpointOverride"},
		{name: "store, unknown field", raw: head + "store:\n  endpoint: https://storage.example\n", wantErr: `unknown field "store.endpoint"`},
		{name: "generated credentials", raw: head + "generatedCredentials:\n  rotation:\n    period: 720h\n  allowPassThrough: true\n", check: func(t *testing.T, c *gcp.BackupBucketConfig) {
			if g := c.GenerationSettings(); g == nil || g.Rotation.RotationPeriod() != 720*time.Hour || g.Rotation.Grace() != 168*time.Hour || !g.AllowPassThrough {
				t.Fatalf("generated credentials %+v", g)
			}
		}},
		{name: "entry credentials off by default", raw: head, check: func(t *testing.T, c *gcp.BackupBucketConfig) {
			if c.EntryCredentialSettings() != nil {
				t.Fatalf("entry credentials on without being asked for: %+v", c.EntryCredentialSettings())
			}
		}},
		{name: "entry credentials by service account keys, default migration grace", raw: head + "entryCredentials:\n  issuer: ServiceAccountKey\n", check: func(t *testing.T, c *gcp.BackupBucketConfig) {
			if s := c.EntryCredentialSettings(); s == nil || s.Issuer != gcp.IssuerServiceAccountKey || s.MigrationGrace() != 24*time.Hour || s.RotationPeriod() != 0 || s.AllowBucketCredentialAtQuota {
				t.Fatalf("entry credentials %+v", s)
			}
		}},
		{name: "entry credentials rotated, migration grace 0s, bucket credential at quota", raw: head + "entryCredentials:\n  issuer: ServiceAccountKey\n  migrationGracePeriod: 0s\n  rotation:\n    period: 720h\n    gracePeriod: 24h\n  allowBucketCredentialAtQuota: true\n", check: func(t *testing.T, c *gcp.BackupBucketConfig) {
			if s := c.EntryCredentialSettings(); s == nil || s.MigrationGrace() != 0 || s.RotationPeriod() != 720*time.Hour || s.RotationGrace() != 24*time.Hour || !s.AllowBucketCredentialAtQuota {
				t.Fatalf("entry credentials %+v", s)
			}
		}},
		{name: "entry credentials without an issuer", raw: head + "entryCredentials: {}\n", wantErr: "providerConfig.entryCredentials.issuer: Unsupported value"},
		{name: "entry credentials by an unknown issuer", raw: head + "entryCredentials:\n  issuer: IAM\n", wantErr: "providerConfig.entryCredentials.issuer: Unsupported value: \"IAM\""},
		{name: "entry credentials, negative migration grace", raw: head + "entryCredentials:\n  issuer: ServiceAccountKey\n  migrationGracePeriod: -1h\n", wantErr: "providerConfig.entryCredentials.migrationGracePeriod: Invalid value"},
		{name: "entry credentials, grace not shorter than the rotation period", raw: head + "entryCredentials:\n  issuer: ServiceAccountKey\n  rotation:\n    period: 24h\n    gracePeriod: 24h\n", wantErr: "providerConfig.entryCredentials.rotation.gracePeriod: Invalid value"},
		{name: "entry credentials, unknown field", raw: head + "entryCredentials:\n  issuer: ServiceAccountKey\n  managedFolder: x\n", wantErr: `unknown field "entryCredentials.managedFolder"`},
		{name: "generated credentials grace not shorter than the period", raw: head + "generatedCredentials:\n  rotation:\n    period: 24h\n    gracePeriod: 25h\n", wantErr: "providerConfig.generatedCredentials.rotation.gracePeriod"},
		{name: "labels", raw: head + "labels:\n  cost-center: platform_1\n  empty: \"\"\n"},
		{name: "unknown field", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  mode: compliance\n", wantErr: `unknown field "immutability.mode"`},
		{name: "wrong apiVersion", raw: "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n", wantErr: "providerConfig.apiVersion"},
		{name: "wrong kind", raw: "apiVersion: gcp.backup.extensions.gardener.cloud/v1alpha1\nkind: Bucket\n", wantErr: "providerConfig.kind"},
		{name: "period too short", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 23h\n", wantErr: "providerConfig.immutability.retentionPeriod"},
		{name: "period not whole seconds", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 24h0.5s\n", wantErr: "providerConfig.immutability.retentionPeriod"},
		{name: "period beyond 100 years", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 876600h1s\n", wantErr: "providerConfig.immutability.retentionPeriod"},
		{name: "bad retention type", raw: head + "immutability:\n  retentionType: object\n  retentionPeriod: 24h\n", wantErr: "providerConfig.immutability.retentionType"},
		{name: "soft delete too short", raw: head + "softDelete:\n  retentionDuration: 72h\n", wantErr: "providerConfig.softDelete.retentionDuration"},
		{name: "soft delete too long", raw: head + "softDelete:\n  retentionDuration: 2184h\n", wantErr: "providerConfig.softDelete.retentionDuration"},
		{name: "upper-case label key", raw: head + "labels:\n  Team: a\n", wantErr: "providerConfig.labels[Team]"},
		{name: "label value with dot", raw: head + "labels:\n  team: a.b\n", wantErr: "providerConfig.labels[team]"},
		{name: "managed label", raw: head + "labels:\n  managed-by: me\n", wantErr: "providerConfig.labels[managed-by]"},
		{name: "adoption label", raw: head + "labels:\n  gardener-backup-adopted-from: me\n", wantErr: "providerConfig.labels[gardener-backup-adopted-from]"},
		{name: "hand back", raw: head + "handBack: true\n", check: func(t *testing.T, c *gcp.BackupBucketConfig) {
			if !c.HandBack {
				t.Fatal("handBack not decoded")
			}
		}},
		{name: "hand back not a boolean", raw: head + "handBack: yes please\n", wantErr: "handBack"},
		{name: "not yaml", raw: "{{{", wantErr: "providerConfig"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := gcp.DecodeBackupBucketConfig([]byte(c.raw))
			if c.wantErr != "" {
				if err == nil || !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v; want ErrInvalidConfig mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.check != nil {
				c.check(t, cfg)
			}
		})
	}
}

func TestDecodeWorkloadIdentityConfig(t *testing.T) {
	const ok = `{"type":"external_account","audience":"//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q","subject_token_type":"urn:ietf:params:oauth:token-type:jwt","token_url":"https://sts.googleapis.com/v1/token","credential_source":{"file":"/ignored"}}`
	head := "apiVersion: gcp.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\n"
	cases := []struct {
		name, raw, wantErr string
	}{
		{name: "valid", raw: head + "projectID: my-project\ncredentialsConfig: " + ok + "\n"},
		{name: "empty", raw: " \n", wantErr: "config: Required value"},
		{name: "no project", raw: head + "credentialsConfig: " + ok + "\n", wantErr: "config.projectID"},
		{name: "no credentials config", raw: head + "projectID: p\n", wantErr: "config.credentialsConfig"},
		{name: "service account instead of external account", raw: head + "projectID: p\ncredentialsConfig: {\"type\":\"service_account\",\"audience\":\"a\",\"subject_token_type\":\"t\",\"token_url\":\"u\"}\n", wantErr: "config.credentialsConfig.type"},
		{name: "no token url", raw: head + "projectID: p\ncredentialsConfig: {\"type\":\"external_account\",\"audience\":\"a\",\"subject_token_type\":\"t\"}\n", wantErr: "config.credentialsConfig.token_url"},
		{name: "unknown field", raw: head + "projectID: p\nregion: x\n", wantErr: `unknown field "region"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, ea, err := gcp.DecodeWorkloadIdentityConfig([]byte(c.raw))
			if c.wantErr != "" {
				if err == nil || !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v; want ErrInvalidConfig mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ProjectID != "my-project" || ea.TokenURL != "https://sts.googleapis.com/v1/token" {
				t.Fatalf("got %+v %+v", cfg, ea)
			}
		})
	}
}
