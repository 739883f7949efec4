package openstack_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestDecodeBackupBucketConfig(t *testing.T) {
	const head = "apiVersion: openstack.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"
	cases := []struct {
		name, raw, wantErr string
		versioning         bool
	}{
		{name: "empty", raw: ""},
		{name: "versioning", raw: head + "versioning: true\n", versioning: true},
		{name: "provider-openstack apiVersion", raw: "apiVersion: openstack.provider.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"},
		{name: "immutability refused", raw: head + "immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n", wantErr: "providerConfig.immutability"},
		{name: "unknown field", raw: head + "versionning: true\n", wantErr: `unknown field "versionning"`},
		{name: "wrong kind", raw: "apiVersion: openstack.backup.extensions.gardener.cloud/v1alpha1\nkind: Nope\n", wantErr: "providerConfig.kind"},
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
		})
	}
}
