// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package copystore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/decode"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	// Every type registers itself (copystore.RegisterType) as the binaries and the admission link them.
	_ "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/all"
)

// TestCopyValidation: `copy:` in aws's seed configuration, decoded and validated as the
// controllers and the admission do (decode.WithSeedConfig), every problem named by its field
// path and classified as a configuration problem (ERR_CONFIGURATION_PROBLEM).
func TestCopyValidation(t *testing.T) {
	const (
		ours = "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
		at   = "spec.extensions[0].providerConfig"
	)
	cases := []struct {
		name    string
		copy    string
		wantErr []string // substrings of the error (none: the config is valid)
		check   func(*testing.T, *copystore.Settings)
	}{
		{name: "the least: credentials, defaults for the rest", copy: "  credentialsRef: backup-copy\n", check: func(t *testing.T, s *copystore.Settings) {
			if s.Bucket("bucket-uid") != "bucket-uid-copy" || s.CredentialsSecret() != "ref-backup-copy" || s.RPOOrDefault() != copystore.DefaultRPO || s.IntervalOr(time.Hour) != time.Hour {
				t.Fatalf("got %+v", s)
			}
		}},
		{name: "everything set", copy: "  type: aws\n  region: eu-west-1\n  bucketName: my-copy\n  credentialsRef: backup-copy\n  rpo: 30m\n  interval: 10m\n  providerConfig:\n    apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\n    kind: BackupBucketConfig\n    immutability: {retentionType: bucket, retentionPeriod: 96h, mode: compliance}\n",
			check: func(t *testing.T, s *copystore.Settings) {
				cfg, err := aws.DecodeBackupBucketConfig(s.RawProviderConfig())
				if err != nil || cfg.Immutability == nil || cfg.Immutability.Mode != aws.ModeCompliance || s.Bucket("x") != "my-copy" || s.RPOOrDefault() != 30*time.Minute || s.IntervalOr(0) != 10*time.Minute || s.Region != "eu-west-1" {
					t.Fatalf("got %+v, %+v, %v", s, cfg, err)
				}
			}},
		{name: "another type, with its own providerConfig and naming rules", copy: "  type: azure\n  credentialsRef: c\n  bucketName: my-copy\n  providerConfig:\n    apiVersion: azure.backup.extensions.gardener.cloud/v1alpha1\n    kind: BackupBucketConfig\n    immutability: {retentionType: bucket, retentionPeriod: 96h}\n",
			check: func(t *testing.T, s *copystore.Settings) {
				cfg, err := azure.DecodeBackupBucketConfig(s.RawProviderConfig())
				if err != nil || cfg.Immutability == nil || s.Type != azure.Type || s.Bucket("x") != "my-copy" {
					t.Fatalf("got %+v, %+v, %v", s, cfg, err)
				}
			}},
		{name: "another type's providerConfig is decoded by that type", copy: "  type: gcp\n  credentialsRef: c\n  providerConfig:\n    apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\n    kind: BackupBucketConfig\n",
			wantErr: []string{at + ".copy.providerConfig.apiVersion: Unsupported value: \"aws.backup.extensions.gardener.cloud/v1alpha1\""}},
		{name: "another type's providerConfig refuses what a copy refuses", copy: "  type: gcp\n  credentialsRef: c\n  providerConfig:\n    apiVersion: gcp.backup.extensions.gardener.cloud/v1alpha1\n    kind: BackupBucketConfig\n    handBack: true\n",
			wantErr: []string{at + ".copy.providerConfig.handBack: Forbidden"}},
		{name: "a bucket name the other type refuses", copy: "  type: azure\n  credentialsRef: c\n  bucketName: my.copy\n",
			wantErr: []string{at + ".copy.bucketName: Invalid value: \"my.copy\"", "Azure's container naming rules"}},
		{name: "a type nobody registered", copy: "  type: ibm\n  credentialsRef: c\n",
			wantErr: []string{at + ".copy.type: Unsupported value: \"ibm\": supported values: \"\", \"aws\", \"azure\", \"gcp\", \"local\", \"openstack\""}},
		{name: "credentials are required", copy: "  region: eu-west-1\n", wantErr: []string{at + ".copy.credentialsRef: Required value"}},
		{name: "credentials must name a secret", copy: "  credentialsRef: Not_A_Name\n", wantErr: []string{at + ".copy.credentialsRef: Invalid value"}},
		{name: "a bucket name the store refuses", copy: "  credentialsRef: c\n  bucketName: UPPER\n", wantErr: []string{at + ".copy.bucketName: Invalid value: \"UPPER\""}},
		{name: "rpo must be positive", copy: "  credentialsRef: c\n  rpo: 0s\n", wantErr: []string{at + ".copy.rpo: Invalid value: \"0s\": must be positive"}},
		{name: "rpo not shorter than the interval", copy: "  credentialsRef: c\n  rpo: 5m\n  interval: 10m\n", wantErr: []string{at + ".copy.rpo: Invalid value: \"5m0s\": must not be shorter than copy.interval"}},
		{name: "an interval under a minute", copy: "  credentialsRef: c\n  interval: 10s\n", wantErr: []string{at + ".copy.interval: Invalid value"}},
		{name: "a duration that does not parse", copy: "  credentialsRef: c\n  rpo: soon\n", wantErr: []string{at + ".copy.rpo: Invalid value: \"soon\""}},
		{name: "serve: copy (failover or move)", copy: "  credentialsRef: c\n  serve: copy\n", check: func(t *testing.T, s *copystore.Settings) {
			if !s.ServesCopy() {
				t.Fatalf("got %+v; want it to serve the copy", s)
			}
		}},
		{name: "serve: primary", copy: "  credentialsRef: c\n  serve: primary\n", check: func(t *testing.T, s *copystore.Settings) {
			if s.ServesCopy() {
				t.Fatalf("got %+v; want it to serve the primary", s)
			}
		}},
		{name: "serve: another store", copy: "  credentialsRef: c\n  serve: both\n", wantErr: []string{at + `.copy.serve: Unsupported value: "both": supported values: "primary", "copy"`}},
		{name: "serve: copy of another type", copy: "  type: gcp\n  credentialsRef: c\n  serve: copy\n", wantErr: []string{at + ".copy.serve: Forbidden: only a copy of the primary's type aws can be served"}},
		{name: "serve: copy with handBack: the incumbent would name the primary", copy: "  credentialsRef: c\n  serve: copy\nhandBack: true\n",
			wantErr: []string{at + ".copy.serve: Forbidden: copy is not allowed with handBack: true"}},
		{name: "serve: primary with handBack", copy: "  credentialsRef: c\n  serve: primary\nhandBack: true\n", check: func(t *testing.T, s *copystore.Settings) {
			if s.ServesCopy() {
				t.Fatalf("got %+v; want it to serve the primary", s)
			}
		}},
		{name: "failover after 10m", copy: "  credentialsRef: c\n  failover: {after: 10m}\n", check: func(t *testing.T, s *copystore.Settings) {
			if s.Failover.AfterOrZero() != 10*time.Minute || s.ServesCopy() {
				t.Fatalf("got %+v; want a failover after 10m, serving the primary", s)
			}
		}},
		{name: "failover too soon", copy: "  credentialsRef: c\n  failover: {after: 1m}\n", wantErr: []string{at + `.copy.failover.after: Invalid value: "1m0s": must be at least 5m0s`}},
		{name: "failover without after", copy: "  credentialsRef: c\n  failover: {}\n", wantErr: []string{at + ".copy.failover.after: Required value"}},
		{name: "failover to a copy of another type", copy: "  type: gcp\n  credentialsRef: c\n  failover: {after: 10m}\n", wantErr: []string{at + ".copy.failover: Forbidden: only a copy of the primary's type aws can be failed over to"}},
		{name: "failover with handBack", copy: "  credentialsRef: c\n  failover: {after: 10m}\nhandBack: true\n", wantErr: []string{at + ".copy.failover: Forbidden: an automatic failover is not allowed with handBack: true"}},
		{name: "an unknown field", copy: "  credentialsRef: c\n  bucket: x\n", wantErr: []string{`unknown field "copy.bucket"`}},
		{name: "the copy's providerConfig is decoded strictly, named where it is", copy: "  credentialsRef: c\n  providerConfig:\n    apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\n    kind: BackupBucketConfig\n    encryption: {type: ROT13}\n",
			wantErr: []string{at + ".copy.providerConfig.encryption.type: Unsupported value: \"ROT13\""}},
		{name: "the copy's providerConfig of another kind", copy: "  credentialsRef: c\n  providerConfig: {apiVersion: v1, kind: Secret}\n",
			wantErr: []string{at + ".copy.providerConfig.apiVersion: Unsupported value"}},
		{name: "a copy of the copy, credentials for others and hand-back are refused", copy: "  credentialsRef: c\n  providerConfig:\n    apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\n    kind: BackupBucketConfig\n    handBack: true\n    generatedCredentials: {issuer: IAM}\n    copy: {credentialsRef: d}\n",
			wantErr: []string{at + ".copy.providerConfig.copy: Forbidden", at + ".copy.providerConfig.generatedCredentials: Forbidden", at + ".copy.providerConfig.handBack: Forbidden"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := decode.WithSeedConfig(aws.DecodeBackupBucketConfig, nil, []byte(ours+"copy:\n"+c.copy), at, aws.Type, aws.IncumbentFields)
			if len(c.wantErr) > 0 {
				if !errors.Is(err, objectstore.ErrInvalidConfig) {
					t.Fatalf("got %v; want ErrInvalidConfig", err)
				}
				if codes := lasterror.Codes(err); len(codes) != 1 || codes[0] != "ERR_CONFIGURATION_PROBLEM" {
					t.Errorf("codes %v; want ERR_CONFIGURATION_PROBLEM", codes)
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
			if cfg.CopySettings() == nil {
				t.Fatal("no copy settings")
			}
			c.check(t, cfg.CopySettings())
		})
	}
}

// TestNoCopy: a config without `copy:` declares none.
func TestNoCopy(t *testing.T) {
	cfg, err := aws.DecodeBackupBucketConfig(nil)
	if err != nil || cfg.CopySettings() != nil {
		t.Fatalf("got %v, %v", cfg.CopySettings(), err)
	}
}

// TestServeCopyWithHandBackEveryType: every type with a hand-back refuses copy.serve: copy beside
// handBack: true, named at copy.serve.
func TestServeCopyWithHandBackEveryType(t *testing.T) {
	for typ, decodeFn := range map[string]func([]byte) error{
		aws.Type:       func(b []byte) error { _, err := aws.DecodeBackupBucketConfig(b); return err },
		azure.Type:     func(b []byte) error { _, err := azure.DecodeBackupBucketConfig(b); return err },
		gcp.Type:       func(b []byte) error { _, err := gcp.DecodeBackupBucketConfig(b); return err },
		openstack.Type: func(b []byte) error { _, err := openstack.DecodeBackupBucketConfig(b); return err },
	} {
		t.Run(typ, func(t *testing.T) {
			raw := "apiVersion: " + typ + ".backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\nhandBack: true\ncopy:\n  credentialsRef: c\n  serve: copy\n"
			err := decodeFn([]byte(raw))
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "copy.serve: Forbidden: copy is not allowed with handBack: true") {
				t.Fatalf("got %v; want copy.serve Forbidden with handBack", err)
			}
		})
	}
}
