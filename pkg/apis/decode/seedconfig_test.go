// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package decode_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestWithSeedConfig: the Seed's providerConfig (here in provider-aws's form, as its admission
// requires) and the seed configuration (this extension's fields) are merged field by field; a
// field set in both to different values, an incumbent's field in the seed configuration and a
// problem of the merged document are refused with the place they come from.
func TestWithSeedConfig(t *testing.T) {
	const (
		incumbent = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h","mode":"governance"}}`
		ours      = "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
		at        = "spec.extensions[1].providerConfig"
	)
	cases := []struct {
		name           string
		providerConfig string
		seedConfig     string
		wantErr        []string // substrings of the error; empty: valid
		check          func(*testing.T, *aws.BackupBucketConfig)
	}{
		{name: "no seed configuration: the providerConfig as it is", providerConfig: incumbent, check: func(t *testing.T, c *aws.BackupBucketConfig) {
			if c.Immutability == nil || c.HandBack {
				t.Fatalf("got %+v", c)
			}
		}},
		{name: "no providerConfig: the seed configuration", seedConfig: ours + "handBack: true\n", check: func(t *testing.T, c *aws.BackupBucketConfig) {
			if !c.HandBack || c.Immutability != nil {
				t.Fatalf("got %+v", c)
			}
		}},
		{name: "both: the union", providerConfig: incumbent, seedConfig: ours + "handBack: true\ngeneratedCredentials:\n  issuer: IAM\ndisabledSettings: [TLSOnlyPolicy]\n",
			check: func(t *testing.T, c *aws.BackupBucketConfig) {
				if !c.HandBack || c.Immutability == nil || c.Immutability.Mode != aws.ModeGovernance || c.GenerationSettings().Issuer != aws.IssuerIAM || !c.Disabled(aws.SettingTLSOnlyPolicy) {
					t.Fatalf("got %+v", c)
				}
			}},
		{name: "a field set to the same value in both", providerConfig: ours + "disabledSettings: [TLSOnlyPolicy]\n", seedConfig: ours + "disabledSettings: [TLSOnlyPolicy]\nhandBack: true\n",
			check: func(t *testing.T, c *aws.BackupBucketConfig) {
				if !c.HandBack || !c.Disabled(aws.SettingTLSOnlyPolicy) {
					t.Fatalf("got %+v", c)
				}
			}},
		{name: "a field set to different values in both is refused, never overridden", providerConfig: ours + "disabledSettings: [TLSOnlyPolicy]\n", seedConfig: ours + "disabledSettings: [PublicAccessBlock]\n",
			wantErr: []string{"providerConfig.disabledSettings", "also set by the seed configuration (the Seed's spec.extensions[] entry of type backup-aws) to another value"}},
		{name: "the incumbent's field in the seed configuration", providerConfig: incumbent, seedConfig: ours + "immutability:\n  retentionType: bucket\n  retentionPeriod: 48h\n  mode: governance\n",
			wantErr: []string{at + ".immutability: Forbidden: is a field of gardener-extension-provider-aws's own API: set it in the Seed's spec.backup.providerConfig"}},
		{name: "an unknown field in the seed configuration is named there", seedConfig: ours + "handback: true\n",
			wantErr: []string{at + `: Invalid value: unknown field "handback"`}},
		{name: "a wrong type in the seed configuration is named there", seedConfig: ours + "handBack: yes-please\n",
			wantErr: []string{at + ".handBack: Invalid value"}},
		{name: "an invalid providerConfig is named there", providerConfig: ours + "encryption:\n  type: ROT13\n", seedConfig: ours + "handBack: true\n",
			wantErr: []string{"providerConfig.encryption.type"}},
		{name: "a problem only the merged document has", providerConfig: ours + "encryption:\n  type: SSE-S3\n", seedConfig: ours + "disabledSettings: [DefaultEncryption]\n",
			wantErr: []string{"providerConfig.encryption: Forbidden", "(the providerConfig merged with the seed configuration (the Seed's spec.extensions[] entry of type backup-aws))"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := decode.WithSeedConfig(aws.DecodeBackupBucketConfig, []byte(c.providerConfig), []byte(c.seedConfig), at, aws.Type, aws.IncumbentFields)
			if len(c.wantErr) > 0 {
				if !errors.Is(err, objectstore.ErrInvalidConfig) {
					t.Fatalf("got %v; want ErrInvalidConfig", err)
				}
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, cfg)
		})
	}
}

// TestUnderKeepsTheSeedConfigurationsPath: a seed configuration's problem stays named where it
// lives when the error is put under an object's spec.
func TestUnderKeepsTheSeedConfigurationsPath(t *testing.T) {
	_, err := decode.WithSeedConfig(aws.DecodeBackupBucketConfig, nil, []byte("kind: BackupBucketConfig\napiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nhandBack: 1\n"), "spec.extensions[0].providerConfig", aws.Type, aws.IncumbentFields)
	got := decode.Under(err, "spec").Error()
	if !strings.HasPrefix(got, "spec.extensions[0].providerConfig.handBack:") {
		t.Fatalf("got %q", got)
	}
}

// TestOverlay: a seed's Extension overrides the landscape's defaults field by field at the top
// level (a field it does not set keeps the default), and either may be empty.
func TestOverlay(t *testing.T) {
	const ours = "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
	defaults := ours + "disabledSettings: [TLSOnlyPolicy]\ngeneratedCredentials: {issuer: IAM}\n"
	got, err := decode.Overlay([]byte(defaults), []byte(ours+"generatedCredentials: {issuer: MinIO}\nhandBack: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := aws.DecodeBackupBucketConfig(got)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.HandBack || cfg.GenerationSettings().Issuer != aws.IssuerMinIO || !cfg.Disabled(aws.SettingTLSOnlyPolicy) {
		t.Fatalf("got %+v; want the seed's handBack and issuer over the defaults' disabledSettings", cfg)
	}
	for _, c := range []struct{ defaults, seed, want string }{{"", ours, ours}, {defaults, "", defaults}, {"", "", ""}} {
		if got, err := decode.Overlay([]byte(c.defaults), []byte(c.seed)); err != nil || string(got) != c.want {
			t.Errorf("Overlay(%q, %q) = %q, %v; want %q", c.defaults, c.seed, got, err, c.want)
		}
	}
	if _, err := decode.Overlay([]byte(defaults), []byte("[1]")); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Errorf("a list: %v; want ErrInvalidConfig", err)
	}
}
