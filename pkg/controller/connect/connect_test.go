// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package connect_test

import (
	"errors"
	"testing"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestAnInvalidConfigComesWithTheDefaults: callers that must go on with an invalid providerConfig
// (deletion, deferral, the scheduler) get the provider's defaults beside the error, never a nil
// config.
func TestAnInvalidConfigComesWithTheDefaults(t *testing.T) {
	p := provider.Register(controllertest.Provider{})
	bb := &extensionsv1alpha1.BackupBucket{Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: &runtime.RawExtension{Raw: []byte("{not json")}}}}
	cfg, err := connect.BucketConfig(p, bb)
	if !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("BucketConfig of an invalid config: %v; want ErrInvalidConfig", err)
	}
	if cfg.ProviderConfig == nil || cfg.GenerationSettings() != nil || cfg.HandsBack() {
		t.Fatalf("an invalid config came with %+v; want the defaults", cfg.ProviderConfig)
	}
	be := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: controllertest.RawConfig(controllertest.Config{HandBack: true})}}}
	if cfg, err := connect.EntryConfig(p, be); err != nil || !cfg.HandsBack() {
		t.Fatalf("EntryConfig = %+v, %v; want the entry's own providerConfig", cfg.ProviderConfig, err)
	}
}
