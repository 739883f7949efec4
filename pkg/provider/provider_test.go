package provider_test

import (
	"context"
	"errors"
	"testing"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/freshness"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

type testConfig struct {
	Issuer string
	freshness.Field
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
