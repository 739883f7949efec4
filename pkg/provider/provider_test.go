// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package provider_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

type testConfig struct {
	freshness.Field

	Issuer string
}

func (c *testConfig) HandsBack() bool { return c.Issuer == "hand-back" }
func (c *testConfig) GenerationSettings() *credentials.Settings {
	if c.Issuer == "" {
		return nil
	}
	return &credentials.Settings{Issuer: c.Issuer}
}

// recordingCloud decodes its input as the issuer's name ("bad": invalid) and records the config
// its constructors are given.
type recordingCloud struct{ got **testConfig }

func (recordingCloud) Type() string                    { return "test" }
func (recordingCloud) ValidateBucketName(string) error { return nil }
func (recordingCloud) Decode(raw []byte) (*testConfig, error) {
	if string(raw) == "bad" {
		return nil, objectstore.Invalidf("providerConfig: bad")
	}
	return &testConfig{Issuer: string(raw)}, nil
}
func (recordingCloud) NewDataPlane(context.Context, provider.Credentials) (objectstore.DataPlane, error) {
	return nil, nil
}
func (c recordingCloud) NewManagement(_ context.Context, _ provider.Credentials, cfg *testConfig) (objectstore.Management, error) {
	*c.got = cfg
	return nil, nil
}
func (c recordingCloud) NewIssuer(_ context.Context, _ provider.Credentials, cfg *testConfig, _ string) (objectstore.CredentialIssuer, error) {
	*c.got = cfg
	return nil, nil
}
func (recordingCloud) EtcdBackupSecretData(*extensionsv1alpha1.BackupEntry, map[string][]byte) (map[string][]byte, error) {
	return nil, nil
}
func (c recordingCloud) EtcdStoreEndpoint(cfg *testConfig, _ map[string][]byte) (string, error) {
	*c.got = cfg
	return "", nil
}
func (recordingCloud) Flags() provider.Flags { return nil }

// TestRegisterHandsTheTypedConfigOn: what Decode returned reaches NewManagement, NewIssuer and
// EtcdStoreEndpoint as the provider's own type; an invalid config comes with the defaults, never a
// nil config.
func TestRegisterHandsTheTypedConfigOn(t *testing.T) {
	var got *testConfig
	p := provider.Register(recordingCloud{&got})
	ctx := context.Background()

	cfg, err := p.Decode([]byte("iam"))
	if err != nil || cfg.GenerationSettings().Issuer != "iam" {
		t.Fatalf("Decode = %v, %v", cfg.ProviderConfig, err)
	}
	if _, err := cfg.NewManagement(ctx, provider.Credentials{}); err != nil || got == nil || got.Issuer != "iam" {
		t.Fatalf("NewManagement got config %+v (%v); want the decoded one", got, err)
	}
	got = nil
	if _, err := cfg.NewIssuer(ctx, provider.Credentials{}, "iam"); err != nil || got == nil || got.Issuer != "iam" {
		t.Fatalf("NewIssuer got config %+v (%v); want the decoded one", got, err)
	}
	got = nil
	if _, err := cfg.EtcdStoreEndpoint(nil); err != nil || got == nil || got.Issuer != "iam" {
		t.Fatalf("EtcdStoreEndpoint got config %+v (%v); want the decoded one", got, err)
	}

	defaults, err := p.Decode([]byte("bad"))
	if !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("Decode of an invalid config: %v; want ErrInvalidConfig", err)
	}
	if defaults.ProviderConfig == nil || defaults.GenerationSettings() != nil || defaults.HandsBack() {
		t.Fatalf("an invalid config came with %+v; want the defaults", defaults.ProviderConfig)
	}
	got = nil
	if _, err := defaults.NewManagement(ctx, provider.Credentials{}); err != nil || got == nil || got.Issuer != "" {
		t.Fatalf("NewManagement of the defaults got %+v (%v)", got, err)
	}
}

// awsAPICloud is a Cloud of aws's real decoding, for the seed configuration's tests.
type awsAPICloud struct{ recordingCloud }

func (awsAPICloud) Type() string { return awsapi.Type }
func (awsAPICloud) Decode(raw []byte) (*awsapi.BackupBucketConfig, error) {
	return awsapi.DecodeBackupBucketConfig(raw)
}
func (awsAPICloud) NewManagement(context.Context, provider.Credentials, *awsapi.BackupBucketConfig) (objectstore.Management, error) {
	return nil, nil
}
func (awsAPICloud) NewIssuer(context.Context, provider.Credentials, *awsapi.BackupBucketConfig, string) (objectstore.CredentialIssuer, error) {
	return nil, nil
}
func (awsAPICloud) EtcdStoreEndpoint(*awsapi.BackupBucketConfig, map[string][]byte) (string, error) {
	return "", nil
}
func (awsAPICloud) Flags() provider.Flags { return nil }

// TestWithSeedConfig: the seed configuration reaches the core through Decode, merged with every
// providerConfig; a bad one stops the start; on a conflict, the config beside the error is the
// seed configuration's (handBack stays visible to a deletion), not the bare defaults.
func TestWithSeedConfig(t *testing.T) {
	const (
		incumbent = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h","mode":"governance"}}`
		ours      = "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
	)
	p := provider.Register[*awsapi.BackupBucketConfig](awsAPICloud{})
	if same, err := provider.WithSeedConfig(p, nil, awsapi.IncumbentFields); err != nil || same != p {
		t.Fatalf("an empty seed configuration: %v, %v; want p itself", same, err)
	}
	for _, bad := range []string{ours + "handback: true\n", ours + "immutability: {retentionType: bucket, retentionPeriod: 24h, mode: governance}\n", "{{"} {
		if _, err := provider.WithSeedConfig(p, []byte(bad), awsapi.IncumbentFields); !errors.Is(err, objectstore.ErrInvalidConfig) {
			t.Errorf("seed configuration %q: %v; want ErrInvalidConfig", bad, err)
		}
	}
	seeded, err := provider.WithSeedConfig(p, []byte(ours+"handBack: true\ngeneratedCredentials: {issuer: MinIO}\n"), awsapi.IncumbentFields)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := seeded.Decode([]byte(incumbent))
	if err != nil || !cfg.HandsBack() || cfg.GenerationSettings().Issuer != awsapi.IssuerMinIO {
		t.Fatalf("Decode = %+v, %v; want handBack and MinIO from the seed configuration", cfg.ProviderConfig, err)
	}
	if cfg.ProviderConfig.(*awsapi.BackupBucketConfig).Immutability == nil {
		t.Fatalf("the providerConfig's immutability was lost: %+v", cfg.ProviderConfig)
	}
	cfg, err = seeded.Decode([]byte(`{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","generatedCredentials":{"issuer":"IAM"}}`))
	if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), "providerConfig.generatedCredentials") {
		t.Fatalf("a conflict: %v", err)
	}
	if cfg.ProviderConfig == nil || !cfg.HandsBack() {
		t.Fatalf("beside the error: %+v; want the seed configuration's", cfg.ProviderConfig)
	}
}

// entryIssuingCloud is a recordingCloud that implements provider.EntryIssuing.
type entryIssuingCloud struct{ recordingCloud }

func (entryIssuingCloud) NewEntryIssuer(context.Context, provider.Credentials, *testConfig, string) (objectstore.EntryCredentialIssuer, error) {
	return nil, nil
}

// TestIssuesEntryCredentials: a Config says whether its provider can issue per-entry credentials,
// so that an entry of one that cannot says why it holds the bucket's (not "switched off").
func TestIssuesEntryCredentials(t *testing.T) {
	var got *testConfig
	for _, c := range []struct {
		name  string
		cloud provider.Provider
		want  bool
	}{
		{"without EntryIssuing", provider.Register[*testConfig](recordingCloud{&got}), false},
		{"with EntryIssuing", provider.Register[*testConfig](entryIssuingCloud{recordingCloud{&got}}), true},
	} {
		cfg, err := c.cloud.Decode(nil)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.IssuesEntryCredentials() != c.want {
			t.Errorf("%s: IssuesEntryCredentials() = %v; want %v", c.name, !c.want, c.want)
		}
	}
}
