// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package provider_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

type testConfig struct {
	freshness.Field
	copystore.CopyField

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
func (recordingCloud) Flags() provider.Flags { return nil }

// TestRegisterHandsTheTypedConfigOn: what Decode returned reaches NewManagement and NewIssuer as the provider's own type; an invalid config comes with the defaults, never a
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
func (awsAPICloud) Flags() provider.Flags { return nil }

// TestWithSeedConfig: the seed configuration reaches the core through Decode, merged with every
// providerConfig; bad defaults stop the start; on a conflict, the config beside the error is the
// seed configuration's (handBack stays visible to a deletion), not the bare defaults.
func TestWithSeedConfig(t *testing.T) {
	p := provider.Register[*awsapi.BackupBucketConfig](awsAPICloud{})
	none, err := provider.WithSeedConfig(p, nil, awsapi.IncumbentFields)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := none.Decode([]byte(incumbent)); err != nil || cfg.HandsBack() || cfg.ProviderConfig.(*awsapi.BackupBucketConfig).Immutability == nil {
		t.Fatalf("no seed configuration: %+v, %v; want the providerConfig as it is", cfg.ProviderConfig, err)
	}
	for _, bad := range []string{ours + "handback: true\n", ours + "immutability: {retentionType: bucket, retentionPeriod: 24h, mode: governance}\n", "{{"} {
		if _, err := provider.WithSeedConfig(p, []byte(bad), awsapi.IncumbentFields); !errors.Is(err, objectstore.ErrInvalidConfig) {
			t.Errorf("defaults %q: %v; want ErrInvalidConfig", bad, err)
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

const (
	incumbent = `{"apiVersion":"aws.provider.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","immutability":{"retentionType":"bucket","retentionPeriod":"24h","mode":"governance"}}`
	ours      = "apiVersion: aws.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
)

// TestSeededAppliesLive: Apply changes what the next Decode reads, over the defaults (the seed's
// fields replace the defaults' at the top level); a bad configuration is refused with its field
// path and the one in force stays; Apply of nothing leaves the defaults.
func TestSeededAppliesLive(t *testing.T) {
	p := provider.Register[*awsapi.BackupBucketConfig](awsAPICloud{})
	seeded, err := provider.WithSeedConfig(p, []byte(ours+"generatedCredentials: {issuer: IAM}\ndisabledSettings: [TLSOnlyPolicy]\n"), awsapi.IncumbentFields)
	if err != nil {
		t.Fatal(err)
	}
	decoded := func() *awsapi.BackupBucketConfig {
		t.Helper()
		cfg, err := seeded.Decode([]byte(incumbent))
		if err != nil {
			t.Fatal(err)
		}
		return cfg.ProviderConfig.(*awsapi.BackupBucketConfig)
	}
	if c := decoded(); c.HandBack || c.GenerationSettings().Issuer != awsapi.IssuerIAM {
		t.Fatalf("the defaults: %+v", c)
	}
	if err := seeded.Apply([]byte(ours+"handBack: true\ngeneratedCredentials: {issuer: MinIO}\n"), "spec.providerConfig"); err != nil {
		t.Fatal(err)
	}
	if c := decoded(); !c.HandBack || c.GenerationSettings().Issuer != awsapi.IssuerMinIO || !c.Disabled(awsapi.SettingTLSOnlyPolicy) {
		t.Fatalf("after Apply: %+v; want the seed's handBack and issuer, the defaults' disabledSettings", c)
	}
	for _, c := range []struct{ bad, want string }{
		{ours + "handback: true\n", `spec.providerConfig: Invalid value: unknown field "handback"`},
		{ours + "immutability: {retentionType: bucket, retentionPeriod: 24h, mode: governance}\n", "spec.providerConfig.immutability: Forbidden"},
		{"[1]", "spec.providerConfig"},
	} {
		err := seeded.Apply([]byte(c.bad), "spec.providerConfig")
		if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Apply(%q) = %v; want ErrInvalidConfig saying %q", c.bad, err, c.want)
		}
		if c := decoded(); !c.HandBack || c.GenerationSettings().Issuer != awsapi.IssuerMinIO {
			t.Fatalf("after a refused Apply: %+v; want the last valid configuration in force", c)
		}
	}
	if err := seeded.Apply(nil, "spec.providerConfig"); err != nil {
		t.Fatal(err)
	}
	if c := decoded(); c.HandBack || c.GenerationSettings().Issuer != awsapi.IssuerIAM {
		t.Fatalf("after Apply(nil): %+v; want the defaults", c)
	}
}

// TestSeededAwaits: while the seed configuration is awaited, Decode, the data plane, the
// etcd-backup secret and every constructor of the config beside Decode's error fail with the
// wait's error (retryable configuration problem), so nothing acts on the defaults; Apply ends it.
func TestSeededAwaits(t *testing.T) {
	var got *testConfig
	seeded, err := provider.WithSeedConfig(provider.Register(entryIssuingCloud{recordingCloud{&got}}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seeded.Await("Extension garden/backup-test is not applied yet")
	ctx := context.Background()
	cfg, err := seeded.Decode([]byte("iam"))
	var pending *provider.SeedConfigPendingError
	if !errors.As(err, &pending) || !strings.Contains(err.Error(), "Extension garden/backup-test is not applied yet") {
		t.Fatalf("Decode: %v; want a SeedConfigPendingError", err)
	}
	if codes := v1beta1helper.ExtractErrorCodes(err); len(codes) != 1 || codes[0] != gardencorev1beta1.ErrorRetryableConfigurationProblem {
		t.Errorf("codes %v", codes)
	}
	calls := map[string]error{}
	_, calls["NewManagement"] = cfg.NewManagement(ctx, provider.Credentials{})
	_, calls["NewIssuer"] = cfg.NewIssuer(ctx, provider.Credentials{}, "iam")
	_, calls["NewEntryIssuer"] = cfg.NewEntryIssuer(ctx, provider.Credentials{}, "iam")
	_, calls["NewDataPlane"] = seeded.NewDataPlane(ctx, provider.Credentials{})
	_, calls["EtcdBackupSecretData"] = seeded.EtcdBackupSecretData(nil, nil)
	for name, err := range calls {
		if !errors.As(err, &pending) {
			t.Errorf("%s: %v; want the wait's error", name, err)
		}
	}
	if got != nil {
		t.Errorf("the cloud was handed a config while awaited: %+v", got)
	}
	if _, err := seeded.InForce(); !errors.As(err, &pending) {
		t.Errorf("InForce: %v", err)
	}
	if err := seeded.Apply(nil, "spec.providerConfig"); err != nil {
		t.Fatal(err)
	}
	if cfg, err := seeded.Decode([]byte("iam")); err != nil || cfg.GenerationSettings().Issuer != "iam" {
		t.Fatalf("after Apply: %+v, %v", cfg.ProviderConfig, err)
	}
	if _, err := seeded.NewDataPlane(ctx, provider.Credentials{}); err != nil {
		t.Fatal(err)
	}
}

// TestSeededConcurrentApply: Decode from many goroutines while Apply replaces the configuration
// sees one whole configuration or the other (run with -race).
func TestSeededConcurrentApply(t *testing.T) {
	seeded, err := provider.WithSeedConfig(provider.Register[*awsapi.BackupBucketConfig](awsAPICloud{}), nil, awsapi.IncumbentFields)
	if err != nil {
		t.Fatal(err)
	}
	a, b := []byte(ours+"handBack: true\ngeneratedCredentials: {issuer: MinIO}\n"), []byte(ours+"generatedCredentials: {issuer: IAM}\n")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				cfg, err := seeded.Decode(nil)
				if err != nil {
					t.Error(err)
					return
				}
				if i := cfg.GenerationSettings(); i != nil && cfg.HandsBack() != (i.Issuer == awsapi.IssuerMinIO) {
					t.Errorf("a torn configuration: %+v", cfg.ProviderConfig)
					return
				}
			}
		})
	}
	for i := range 200 {
		if err := seeded.Apply([][]byte{a, b}[i%2], "spec.providerConfig"); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
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
