// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

// secret builds credentials secret data from key=value pairs.
func secret(kv ...string) map[string][]byte {
	d := map[string][]byte{}
	for _, p := range kv {
		k, v, _ := strings.Cut(p, "=")
		d[k] = []byte(v)
	}
	return d
}

var (
	passwordSecret = []string{"authURL=https://keystone/v3", "domainName=Default", "tenantName=p", "username=u", "password=pw", "bucketName=b"}
	appCredSecret  = []string{"authURL=https://keystone/v3", "domainName=Default", "tenantName=p",
		"applicationCredentialID=id", "applicationCredentialName=n", "applicationCredentialSecret=s", "bucketName=b"}
)

// TestEtcdBackupHoldsOneKindOfCredentials: etcd-backup-restore v0.43.0 refuses a credentials
// directory with keys of both password and application credentials, and needs domainName,
// tenantName and (with an application credential) its ID and name.
func TestEtcdBackupHoldsOneKindOfCredentials(t *testing.T) {
	be := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{Region: "RegionOne"}}
	passwordKeys := []string{"authURL", "bucketName", "domainName", "password", "region", "tenantName", "username"}
	appCredKeys := []string{"applicationCredentialID", "applicationCredentialName", "applicationCredentialSecret", "authURL", "bucketName", "domainName", "region", "tenantName"}
	for _, c := range []struct {
		name     string
		data     map[string][]byte
		wantKeys []string
		missing  string // the key the error names
	}{
		{name: "password", data: secret(passwordSecret...), wantKeys: passwordKeys},
		{name: "password with stray keys", data: secret(append(passwordSecret, "insecure=true", "key.json={}")...), wantKeys: passwordKeys},
		{name: "application credential", data: secret(appCredSecret...), wantKeys: appCredKeys},
		{name: "application credential with a stray username", data: secret(append(appCredSecret, "username=u")...), wantKeys: appCredKeys},
		{name: "application credential with username and password", data: secret(append(appCredSecret, "username=u", "password=pw")...), wantKeys: appCredKeys},
		{name: "application credential without its name", data: with(secret(appCredSecret[:4]...), "applicationCredentialSecret", "s"), missing: "applicationCredentialName"},
		{name: "application credential without tenantName", data: secret("authURL=https://keystone/v3", "domainName=Default",
			"applicationCredentialID=id", "applicationCredentialName=n", "applicationCredentialSecret=s"), missing: "tenantName"},
		{name: "application credential by name only", data: secret("authURL=https://keystone/v3", "domainName=Default", "tenantName=p", "username=u",
			"applicationCredentialName=n", "applicationCredentialSecret=s"), missing: "applicationCredentialID"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := (&osprovider.Provider{}).EtcdBackupSecretData(be, c.data)
			if c.missing != "" {
				if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), `"`+c.missing+`"`) {
					t.Fatalf("error %v; want ErrInvalidConfig naming %q", err, c.missing)
				}
				assertNoValue(t, err, c.data)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(out)); !slices.Equal(got, c.wantKeys) {
				t.Fatalf("etcd-backup keys %v; want %v", got, c.wantKeys)
			}
		})
	}
}

// TestBucketRefusesCredentialsTheSidecarCannotUse: the bucket is refused with a configuration
// problem naming the key, before anything is made, when what its shoots would get is not usable
// by etcd-backup-restore; with generated credentials only the context keys they inherit count.
func TestBucketRefusesCredentialsTheSidecarCannotUse(t *testing.T) {
	byID := secret("authURL=http://127.0.0.1:1/v3", "region=RegionOne", "applicationCredentialID=id", "applicationCredentialSecret=s")
	generated := &osapi.BackupBucketConfig{GeneratedCredentials: &osapi.GeneratedCredentialsConfig{}}
	passThrough := &osapi.BackupBucketConfig{GeneratedCredentials: &osapi.GeneratedCredentialsConfig{}}
	passThrough.GeneratedCredentials.AllowPassThrough = true
	for _, c := range []struct {
		name    string
		data    map[string][]byte
		cfg     *osapi.BackupBucketConfig
		missing string
	}{
		{name: "no generation: the operator's credential is handed on", data: byID, cfg: &osapi.BackupBucketConfig{}, missing: "domainName"},
		{name: "no generation, context given", data: with(byID, "domainName", "Default", "tenantName", "p"), cfg: &osapi.BackupBucketConfig{}, missing: "applicationCredentialName"},
		{name: "generation: the credentials inherit the context", data: with(byID, "domainName", "Default"), cfg: generated, missing: "tenantName"},
		{name: "pass-through may hand the operator's on", data: with(byID, "domainName", "Default", "tenantName", "p"), cfg: passThrough, missing: "applicationCredentialName"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := (&osprovider.Provider{}).NewManagement(context.Background(), provider.Credentials{Data: c.data, Region: "RegionOne"}, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Keystone at 127.0.0.1:1 is unreachable: the refusal must come before any request.
			err = s.EnsureBucket(context.Background(), objectstore.Bucket{Name: "b", Region: "RegionOne"})
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), `"`+c.missing+`"`) {
				t.Fatalf("EnsureBucket: %v; want ErrInvalidConfig naming %q", err, c.missing)
			}
			assertNoValue(t, err, c.data)
		})
	}
}

func assertNoValue(t *testing.T, err error, data map[string][]byte) {
	t.Helper()
	for k, v := range data {
		if len(v) > 2 && strings.Contains(err.Error(), string(v)) && k != "authURL" {
			t.Fatalf("the error carries the value of %q: %v", k, err)
		}
	}
}

func TestCredentialErrorsNameTheKey(t *testing.T) {
	base := cloud.SecretData("demo")
	cases := map[string]struct {
		data    map[string][]byte
		mention string
	}{
		"no authURL":          {with(base, "authURL", ""), "authURL"},
		"no password":         {with(base, "password", ""), "password"},
		"app secret alone":    {with(base, "applicationCredentialSecret", "s", "username", "", "password", ""), "applicationCredentialID"},
		"app name needs user": {with(base, "applicationCredentialSecret", "s", "applicationCredentialName", "n", "username", ""), "username"},
		"bad insecure":        {with(base, "insecure", "sometimes"), "insecure"},
		"bad CA":              {with(base, "caCert", "not a certificate"), "caCert"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := testProvider.NewDataPlane(context.Background(), provider.Credentials{Data: c.data, Region: "RegionOne"})
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("got %v; want ErrInvalidConfig naming %q", err, c.mention)
			}
			if strings.Contains(err.Error(), "demopass") {
				t.Fatalf("the error reveals the password: %v", err)
			}
		})
	}
}

func TestEtcdBackupSecretData(t *testing.T) {
	entry := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{Region: "RegionOne"}}
	in := with(cloud.SecretData("demo"), "bucketName", "b", "stray.json", "{}", "caCert", "", "region", "")
	out, err := testProvider.EtcdBackupSecretData(entry, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"authURL", "bucketName", "domainName", "password", "region", "tenantName", "username"}
	var got []string
	for k := range out {
		got = append(got, k)
	}
	if len(got) != len(want) {
		t.Fatalf("keys %v; want exactly %v", got, want)
	}
	for _, k := range want {
		if _, ok := out[k]; !ok {
			t.Fatalf("missing %q in %v", k, got)
		}
	}
	if string(out["region"]) != "RegionOne" {
		t.Fatalf("region %q", out["region"])
	}
	if _, err := testProvider.EtcdBackupSecretData(entry, with(in, "password", "")); !errors.Is(err, objectstore.ErrInvalidConfig) {
		t.Fatalf("an entry secret without a password: %v; want ErrInvalidConfig", err)
	}
}
