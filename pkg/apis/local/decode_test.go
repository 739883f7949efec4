// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package local_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/local"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const head = "apiVersion: local.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"

func TestDecode(t *testing.T) {
	for _, raw := range []string{"", head, head + "backupFreshness:\n  fullSnapshotMaxAge: 25h\n"} {
		cfg, err := local.DecodeBackupBucketConfig([]byte(raw))
		if err != nil || cfg == nil || cfg.GenerationSettings() != nil || cfg.HandsBack() {
			t.Errorf("decoding %q = %+v, %v; want a config without generated credentials or hand-back", raw, cfg, err)
		}
	}
	// What a filesystem cannot do is refused, never ignored (the shared rows are pkg/provider/all's).
	for raw, path := range map[string]string{
		head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n": "providerConfig.immutability",
		head + "generatedCredentials:\n  rotation:\n    period: 720h\n":           "providerConfig.generatedCredentials",
		head + "generatedCredentials: {}\n":                                       "providerConfig.generatedCredentials",
	} {
		_, err := local.DecodeBackupBucketConfig([]byte(raw))
		if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), path) {
			t.Errorf("decoding %q: %v; want ErrInvalidConfig at %s", raw, err, path)
		}
	}
}

func TestBucketNames(t *testing.T) {
	for _, ok := range []string{"8b6b9d0e-2f1c-4a8e-9d3e-5c7f0a1b2c3d", "a", strings.Repeat("a", 255)} {
		if err := local.ValidateBucketName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for name, rule := range map[string]string{"": "empty", ".x": `"."`, "..": `"."`, "a/b": `"/"`, `a\b`: `"/"`, strings.Repeat("a", 256): "255", "a\x00b": "control", "a\xffb": "UTF-8"} {
		err := local.ValidateBucketName(name)
		if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), rule) {
			t.Errorf("%q: %v; want ErrInvalidConfig naming %s", name, err, rule)
		}
	}
}
