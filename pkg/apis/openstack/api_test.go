// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestAPI: the SDK-free half decodes to the typed config (the defaults for none) and never a
// typed nil with an error, and checks Swift's container names.
func TestAPI(t *testing.T) {
	api := openstack.API
	if api.Type() != "openstack" {
		t.Fatalf("type %q", api.Type())
	}
	cfg, err := api.DecodeBucketConfig(nil)
	if c, ok := cfg.(*openstack.BackupBucketConfig); err != nil || !ok || c == nil {
		t.Fatalf("no providerConfig: %#v, %v; want the defaults", cfg, err)
	}
	if cfg.GenerationSettings() != nil {
		t.Fatal("the defaults ask for generated credentials")
	}
	cfg, err = api.DecodeBucketConfig([]byte("apiVersion: openstack.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\ngeneratedCredentials: {}\n"))
	if err != nil || cfg.GenerationSettings().Issuer != openstack.IssuerApplicationCredential {
		t.Fatalf("generatedCredentials: %v, %v; want issuer %q", cfg, err, openstack.IssuerApplicationCredential)
	}
	cfg, err = api.DecodeBucketConfig([]byte("kind: Nope\n"))
	if !errors.Is(err, objectstore.ErrInvalidConfig) || cfg != nil {
		t.Fatalf("a wrong kind: %#v, %v; want a nil config and ErrInvalidConfig", cfg, err)
	}
	for name, rule := range map[string]string{"": "empty", "a/b": "/", strings.Repeat("a", openstack.MaxContainerNameLength+1): "256", "a\xff": "UTF-8", "a\x00b": "NUL"} {
		if err := api.ValidateBucketName(name); !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), rule) {
			t.Errorf("name %q: %v; want ErrInvalidConfig naming %q", name, err, rule)
		}
	}
	if err := api.ValidateBucketName("geb-backup-1"); err != nil {
		t.Fatal(err)
	}
}
