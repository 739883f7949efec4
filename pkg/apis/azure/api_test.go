// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package azure_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestAPI(t *testing.T) {
	api := azure.API
	if api.Type() != "azure" {
		t.Fatalf("Type %q", api.Type())
	}
	cfg, err := api.DecodeBucketConfig(nil)
	if c, ok := cfg.(*azure.BackupBucketConfig); err != nil || !ok || c == nil {
		t.Fatalf("empty config: %#v, %v; want the defaults", cfg, err)
	}
	// A refused config is a nil interface, not a typed nil the core would take for the defaults.
	if cfg, err := api.DecodeBucketConfig([]byte("apiVersion: azure.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\nversioning: true\n")); cfg != nil || !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("bad config: %#v, %v; want nil and ErrInvalidConfig", cfg, err)
	}
}

func TestValidateBucketName(t *testing.T) {
	cases := []struct {
		name string
		rule string // a substring of the rule broken; empty: valid
	}{
		{"abc", ""},
		{"geb-bucket-1", ""},
		{strings.Repeat("a", 63), ""},
		{"ab", "3 to 63 characters"},
		{strings.Repeat("a", 64), "3 to 63 characters"},
		{"Bucket", "only lowercase letters"},
		{"my_bucket", "only lowercase letters"},
		{"-bucket", "must begin with"},
		{"bucket-", "must not end with a dash"},
		{"my--bucket", "two consecutive dashes"},
	}
	for _, c := range cases {
		err := azure.API.ValidateBucketName(c.name)
		switch {
		case c.rule == "" && err != nil:
			t.Errorf("%q: %v; want valid", c.name, err)
		case c.rule != "" && (!errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.rule)):
			t.Errorf("%q: %v; want ErrInvalidConfig naming %q", c.name, err, c.rule)
		}
	}
}
