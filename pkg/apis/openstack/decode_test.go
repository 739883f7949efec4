// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestDecodeBackupBucketConfig(t *testing.T) {
	const head = "apiVersion: openstack.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
	cases := []struct {
		name, raw, wantErr string
		versioning         bool
		check              func(*testing.T, *openstack.BackupBucketConfig)
	}{
		{name: "empty", raw: ""},
		{name: "versioning", raw: head + "versioning: true\n", versioning: true},
		{name: "provider-openstack apiVersion", raw: "apiVersion: openstack.provider.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"},
		{name: "immutability refused", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n", wantErr: "providerConfig.immutability"},
		{name: "unknown field", raw: head + "versionning: true\n", wantErr: `unknown field "versionning"`},
		{name: "wrong kind", raw: "apiVersion: openstack.backup.extensions.gardener.cloud/v1alpha1\nkind: Nope\n", wantErr: "providerConfig.kind"},
		{name: "handBack", raw: head + "handBack: true\n", check: func(t *testing.T, c *openstack.BackupBucketConfig) {
			if !c.HandBack {
				t.Fatal("handBack: true decoded as false")
			}
		}},
		{name: "handBack with versioning", raw: head + "handBack: true\nversioning: true\n", wantErr: "providerConfig.versioning: Invalid value: true: must be false with handBack"},
		{name: "handBack with generated credentials", raw: head + "handBack: true\ngeneratedCredentials: {}\n", wantErr: "providerConfig.generatedCredentials: Forbidden: must be removed"},
		{name: "handBack as a string", raw: head + "handBack: \"yes\"\n", wantErr: "providerConfig.handBack"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := openstack.DecodeBackupBucketConfig([]byte(c.raw))
			if c.wantErr != "" {
				if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v; want ErrInvalidConfig mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil || cfg.Versioning != c.versioning {
				t.Fatalf("got %+v, %v", cfg, err)
			}
			if c.check != nil {
				c.check(t, cfg)
			}
		})
	}
}

func TestGeneratedCredentialsConfig(t *testing.T) {
	const head = "apiVersion: openstack.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\ngeneratedCredentials:\n"
	cases := []struct {
		name, raw, wantErr  string
		period, grace, life time.Duration
		restricted, through bool
	}{
		{name: "defaults", raw: head + "  {}\n", period: 720 * time.Hour, grace: 168 * time.Hour, life: 1608 * time.Hour, restricted: true},
		{name: "grace only keeps the default period", raw: head + "  rotation:\n    gracePeriod: 1h\n", period: 720 * time.Hour, grace: time.Hour, life: 1441 * time.Hour, restricted: true},
		{name: "everything", raw: head + "  rotation:\n    period: 24h\n    gracePeriod: 0s\n  accessRules: false\n  roles: [member]\n  allowPassThrough: true\n", period: 24 * time.Hour, life: 48 * time.Hour, through: true},
		{name: "grace not shorter than the default period", raw: head + "  rotation:\n    gracePeriod: 720h\n", wantErr: "providerConfig.generatedCredentials.rotation.gracePeriod"},
		{name: "grace not shorter than the period", raw: head + "  rotation:\n    period: 24h\n    gracePeriod: 24h\n", wantErr: "providerConfig.generatedCredentials.rotation.gracePeriod"},
		{name: "empty role", raw: head + "  roles: [\"\"]\n", wantErr: "providerConfig.generatedCredentials.roles[0]"},
		{name: "role with a trailing space", raw: head + "  roles: [\"member \"]\n", wantErr: "providerConfig.generatedCredentials.roles[0]"},
		{name: "duplicate role", raw: head + "  roles: [member, reader, member]\n", wantErr: "providerConfig.generatedCredentials.roles[2]: Duplicate value"},
		{name: "unknown field", raw: head + "  accesRules: true\n", wantErr: `unknown field "generatedCredentials.accesRules"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := openstack.DecodeBackupBucketConfig([]byte(c.raw))
			if c.wantErr != "" {
				if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v; want ErrInvalidConfig mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g := cfg.GenerationSettings()
			if g.Rotation.RotationPeriod() != c.period || g.Rotation.Grace() != c.grace || cfg.Lifetime() != c.life ||
				cfg.GeneratedCredentials.RestrictToContainer() != c.restricted || g.AllowPassThrough != c.through {
				t.Fatalf("period %v grace %v lifetime %v restricted %v pass-through %v", g.Rotation.RotationPeriod(), g.Rotation.Grace(), cfg.Lifetime(), cfg.GeneratedCredentials.RestrictToContainer(), g.AllowPassThrough)
			}
		})
	}
	if cfg, _ := openstack.DecodeBackupBucketConfig(nil); cfg.GenerationSettings() != nil {
		t.Fatal("a config without generatedCredentials asks for them")
	}
}
