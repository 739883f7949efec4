// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestDecodeBackupBucketConfig(t *testing.T) {
	const head = "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
	cases := []struct {
		name    string
		raw     string
		wantErr string // a substring naming the field path; empty: valid
		check   func(*testing.T, *aws.BackupBucketConfig)
	}{
		{name: "empty gives defaults", raw: "", check: func(t *testing.T, c *aws.BackupBucketConfig) {
			if c.Immutability != nil || c.Encryption != nil || len(c.DisabledSettings) != 0 {
				t.Fatalf("defaults expected, got %+v", c)
			}
		}},
		{name: "immutability", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 48h\n  mode: compliance\n",
			check: func(t *testing.T, c *aws.BackupBucketConfig) {
				if c.Immutability.RetentionPeriod.Duration != 48*time.Hour || c.Immutability.Mode != aws.ModeCompliance {
					t.Fatalf("got %+v", c.Immutability)
				}
			}},
		{name: "provider-aws apiVersion is accepted", raw: `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h","mode":"governance"}}`},
		{name: "kms", raw: head + "encryption:\n  type: SSE-KMS\n  kmsKeyID: alias/backup\n"},
		{name: "disabled settings", raw: head + "disabledSettings: [DefaultEncryption, PublicAccessBlock]\n"},
		{name: "handBack", raw: head + "handBack: true\n", check: func(t *testing.T, c *aws.BackupBucketConfig) {
			if !c.HandBack {
				t.Fatalf("handBack not set: %+v", c)
			}
		}},
		{name: "handBack of the wrong type", raw: head + "handBack: soon\n", wantErr: "providerConfig.handBack"},
		{name: "unknown field", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  mode: governance\n  extra: 1\n", wantErr: `unknown field "immutability.extra"`},
		{name: "generated IAM credentials rotated", raw: head + "generatedCredentials:\n  issuer: IAM\n  rotation:\n    period: 720h\n    gracePeriod: 24h\n",
			check: func(t *testing.T, c *aws.BackupBucketConfig) {
				if c.GenerationSettings().Rotation.RotationPeriod() != 720*time.Hour || c.GenerationSettings().Rotation.Grace() != 24*time.Hour {
					t.Fatalf("rotation %v, grace %v", c.GenerationSettings().Rotation.RotationPeriod(), c.GenerationSettings().Rotation.Grace())
				}
			}},
		{name: "generated credentials default grace, pass-through", raw: head + "generatedCredentials:\n  issuer: MinIO\n  allowPassThrough: true\n",
			check: func(t *testing.T, c *aws.BackupBucketConfig) {
				if !c.GenerationSettings().AllowPassThrough {
					t.Fatal("allowPassThrough not decoded")
				}
				if c.GenerationSettings().Rotation.RotationPeriod() != 0 || c.GenerationSettings().Rotation.Grace() != 7*24*time.Hour {
					t.Fatalf("rotation %v, grace %v", c.GenerationSettings().Rotation.RotationPeriod(), c.GenerationSettings().Rotation.Grace())
				}
			}},
		{name: "unknown issuer", raw: head + "generatedCredentials:\n  issuer: Vault\n", wantErr: "providerConfig.generatedCredentials.issuer"},
		{name: "grace not shorter than the period", raw: head + "generatedCredentials:\n  issuer: IAM\n  rotation:\n    period: 24h\n    gracePeriod: 48h\n", wantErr: "providerConfig.generatedCredentials.rotation.gracePeriod"},
		{name: "wrong apiVersion", raw: "apiVersion: v1\nkind: BackupBucketConfig\n", wantErr: "providerConfig.apiVersion"},
		{name: "wrong kind", raw: "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: Other\n", wantErr: "providerConfig.kind"},
		{name: "period not whole days", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 36h\n  mode: governance\n", wantErr: "providerConfig.immutability.retentionPeriod"},
		{name: "period too short", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 1h\n  mode: governance\n", wantErr: "providerConfig.immutability.retentionPeriod"},
		{name: "bad mode", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  mode: strict\n", wantErr: "providerConfig.immutability.mode"},
		{name: "missing mode", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n", wantErr: "providerConfig.immutability.mode"},
		{name: "bad retention type", raw: head + "immutability:\n  retentionType: object\n  retentionPeriod: 24h\n  mode: governance\n", wantErr: "providerConfig.immutability.retentionType"},
		{name: "kms without key", raw: head + "encryption:\n  type: SSE-KMS\n", wantErr: "providerConfig.encryption.kmsKeyID"},
		{name: "key without kms", raw: head + "encryption:\n  type: SSE-S3\n  kmsKeyID: k\n", wantErr: "providerConfig.encryption.kmsKeyID"},
		{name: "bad encryption type", raw: head + "encryption:\n  type: ROT13\n", wantErr: "providerConfig.encryption.type"},
		{name: "encryption while disabled", raw: head + "encryption:\n  type: SSE-S3\ndisabledSettings: [DefaultEncryption]\n", wantErr: "providerConfig.encryption"},
		{name: "unknown setting", raw: head + "disabledSettings: [Versioning]\n", wantErr: "providerConfig.disabledSettings[0]"},
		{name: "duplicate setting", raw: head + "disabledSettings: [TLSOnlyPolicy, TLSOnlyPolicy]\n", wantErr: "providerConfig.disabledSettings[1]"},
		{name: "not yaml", raw: "{{{", wantErr: "providerConfig"},
		{name: "unparseable period", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: forever\n  mode: governance\n", wantErr: `providerConfig.immutability.retentionPeriod: Invalid value: "forever"`},
		{name: "period as a number", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 96\n  mode: governance\n", wantErr: "providerConfig.immutability.retentionPeriod: Invalid value: 96"},
		{name: "unparseable rotation period", raw: head + "generatedCredentials:\n  issuer: IAM\n  rotation:\n    period: monthly\n", wantErr: "providerConfig.generatedCredentials.rotation.period"},
		{name: "unparseable grace period", raw: head + "generatedCredentials:\n  issuer: IAM\n  rotation:\n    gracePeriod: 1w\n", wantErr: "providerConfig.generatedCredentials.rotation.gracePeriod"},
		{name: "wrong type in an inlined field", raw: head + "generatedCredentials:\n  issuer: IAM\n  allowPassThrough: yes-please\n", wantErr: "providerConfig.generatedCredentials.allowPassThrough: Invalid value"},
		{name: "entry credentials off by default", raw: head, check: func(t *testing.T, c *aws.BackupBucketConfig) {
			if c.EntryCredentialSettings() != nil {
				t.Fatalf("entry credentials on without being asked for: %+v", c.EntryCredentialSettings())
			}
		}},
		{name: "entry credentials by MinIO, default migration grace", raw: head + "entryCredentials:\n  issuer: MinIO\n", check: func(t *testing.T, c *aws.BackupBucketConfig) {
			if s := c.EntryCredentialSettings(); s == nil || s.Issuer != aws.IssuerMinIO || s.MigrationGrace() != 24*time.Hour {
				t.Fatalf("settings %+v", s)
			}
		}},
		{name: "entry credentials by IAM, migration grace 0s", raw: head + "entryCredentials:\n  issuer: IAM\n  migrationGracePeriod: 0s\n", check: func(t *testing.T, c *aws.BackupBucketConfig) {
			if s := c.EntryCredentialSettings(); s == nil || s.Issuer != aws.IssuerIAM || s.MigrationGrace() != 0 {
				t.Fatalf("settings %+v", s)
			}
		}},
		{name: "entry credentials without an issuer", raw: head + "entryCredentials: {}\n", wantErr: "providerConfig.entryCredentials.issuer: Unsupported value"},
		{name: "entry credentials, negative migration grace", raw: head + "entryCredentials:\n  issuer: MinIO\n  migrationGracePeriod: -1h\n", wantErr: "providerConfig.entryCredentials.migrationGracePeriod: Invalid value"},
		{name: "entry credentials, unknown field", raw: head + "entryCredentials:\n  issuer: MinIO\n  rotate: {}\n", wantErr: `unknown field "entryCredentials.rotate"`},
		{name: "entry credentials rotated monthly with a day's grace, bucket credential at quota", raw: head + "entryCredentials:\n  issuer: IAM\n  rotation:\n    period: 720h\n    gracePeriod: 24h\n  allowBucketCredentialAtQuota: true\n", check: func(t *testing.T, c *aws.BackupBucketConfig) {
			if s := c.EntryCredentialSettings(); s == nil || s.RotationPeriod() != 720*time.Hour || s.RotationGrace() != 24*time.Hour || !s.AllowBucketCredentialAtQuota {
				t.Fatalf("settings %+v", s)
			}
		}},
		{name: "entry credentials not rotated by default", raw: head + "entryCredentials:\n  issuer: IAM\n", check: func(t *testing.T, c *aws.BackupBucketConfig) {
			if s := c.EntryCredentialSettings(); s == nil || s.RotationPeriod() != 0 || s.AllowBucketCredentialAtQuota {
				t.Fatalf("settings %+v", s)
			}
		}},
		{name: "entry credentials, a weekly rotation without a grace (the default 168h is not shorter)", raw: head + "entryCredentials:\n  issuer: MinIO\n  rotation:\n    period: 168h\n", wantErr: "providerConfig.entryCredentials.rotation.gracePeriod: Required value: the default 168h0m0s is not shorter than the period 168h0m0s"},
		{name: "generated credentials, a daily rotation without a grace", raw: head + "generatedCredentials:\n  issuer: IAM\n  rotation:\n    period: 24h\n", wantErr: "providerConfig.generatedCredentials.rotation.gracePeriod: Required value"},
		{name: "entry credentials, grace not shorter than the rotation period", raw: head + "entryCredentials:\n  issuer: MinIO\n  rotation:\n    period: 24h\n    gracePeriod: 24h\n", wantErr: "providerConfig.entryCredentials.rotation.gracePeriod: Invalid value"},
		{name: "object given as a list", raw: head + "encryption: [SSE-S3]\n", wantErr: "providerConfig.encryption: Invalid value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := aws.DecodeBackupBucketConfig([]byte(c.raw))
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
	good := "apiVersion: aws.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\nroleARN: arn:aws:iam::123456789012:role/backup\n"
	cfg, err := aws.DecodeWorkloadIdentityConfig([]byte(good))
	if err != nil || cfg.RoleARN != "arn:aws:iam::123456789012:role/backup" {
		t.Fatalf("got %+v, %v", cfg, err)
	}
	for _, bad := range []string{"apiVersion: aws.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\n", "kind: WorkloadIdentityConfig\nroleARN: arn:x\n"} {
		if _, err := aws.DecodeWorkloadIdentityConfig([]byte(bad)); !errors.Is(err, objectstore.ErrInvalidConfig) {
			t.Errorf("%q: got %v; want ErrInvalidConfig", bad, err)
		}
	}
}
