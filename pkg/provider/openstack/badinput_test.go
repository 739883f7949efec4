// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	gopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
)

// badInput is one wrong input: what the extension does with it (decode a providerConfig, build a
// store and reconcile a bucket, delete an entry's prefix, write etcd-backup), the sentinel it must
// answer with (which pkg/controller maps to a Gardener error code), and what the message must
// name. Every case also checks that no secret value is in the message and that the project's
// account holds the same containers before and after.
type badInput struct {
	name  string
	data  map[string][]byte // the secret involved, if any: none of its secret values may appear
	run   func(t *testing.T, data map[string][]byte) error
	want  error
	names []string // substrings the message must contain: field path, secret key, rule, region
}

const osConfigHead = "apiVersion: openstack.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"

func osConfigCase(name, raw string, names ...string) badInput {
	return badInput{name: "providerConfig: " + name, want: objectstore.ErrInvalidConfig, names: names,
		run: func(t *testing.T, _ map[string][]byte) error {
			_, err := osapi.API.DecodeBucketConfig([]byte(raw))
			wantConfigurationProblem(t, err)
			return err
		}}
}

// wantConfigurationProblem checks that pkg/controller reports err with Gardener's
// ERR_CONFIGURATION_PROBLEM, the code a wrong providerConfig must carry.
func wantConfigurationProblem(t *testing.T, err error) {
	t.Helper()
	if codes := lasterror.Codes(err); !slices.Equal(codes, []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}) {
		t.Errorf("Gardener error codes %v; want %s", codes, gardencorev1beta1.ErrorConfigurationProblem)
	}
}

// reconcileContainer does what the BackupBucket actuator does: a store from the secret and the
// decoded config, then EnsureBucket with the bucket's name and spec.region.
func reconcileContainer(bucket, specRegion string) func(*testing.T, map[string][]byte) error {
	return func(_ *testing.T, data map[string][]byte) error {
		cfg := &osapi.BackupBucketConfig{}
		store, err := testProvider.NewManagement(context.Background(), provider.Credentials{Data: data, Region: specRegion}, cfg)
		if err != nil {
			return err
		}
		return store.EnsureBucket(context.Background(), objectstore.Bucket{Name: bucket, Region: specRegion})
	}
}

// deleteEntryIn does what the BackupEntry delegate does on deletion: a store from the secret, then
// the deletion engine on the entry's prefix in spec.bucketName.
func deleteEntryIn(bucket, specRegion string) func(*testing.T, map[string][]byte) error {
	return func(_ *testing.T, data map[string][]byte) error {
		store, err := testProvider.NewDataPlane(context.Background(), provider.Credentials{Data: data, Region: specRegion})
		if err != nil {
			return err
		}
		prefix, err := objectstore.EntryPrefix("shoot--garden--bad-input")
		if err != nil {
			return err
		}
		_, err = objectstore.DeletePrefix(context.Background(), store, bucket, prefix, objectstore.DeleteOptions{})
		return err
	}
}

func writeEtcdBackupSecret(_ *testing.T, data map[string][]byte) error {
	be := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{Region: "RegionOne", BucketName: "geb-bad-input"}}
	_, err := testProvider.EtcdBackupSecretData(be, data)
	return err
}

// set returns a copy of data with key set to value, empty values included (stack.With removes a
// key given an empty value).
func set(data map[string][]byte, kv ...string) map[string][]byte {
	out := maps.Clone(data)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = []byte(kv[i+1])
	}
	return out
}

func drop(data map[string][]byte, keys ...string) map[string][]byte {
	out := maps.Clone(data)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// secretValues are the values of data that must never be shown: the password, the application
// credential's secret and a password in the authURL's user info.
func secretValues(data map[string][]byte) []string {
	var vs []string
	for _, k := range []string{osprovider.KeyPassword, osprovider.KeyApplicationCredentialSecret} {
		if v := string(data[k]); len(v) > 3 {
			vs = append(vs, v)
		}
	}
	if u, err := url.Parse(string(data[osprovider.KeyAuthURL])); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			vs = append(vs, p)
		}
	}
	return vs
}

func TestBadInputIsRefusedNamingItsCauseAndTouchesNothing(t *testing.T) {
	ctx := context.Background()
	good := cloud.SecretData("demo")
	// A container that exists, for the entry deletions.
	existing := newContainerName()
	if err := newStore(t, good).EnsureBucket(ctx, objectstore.Bucket{Name: existing, Region: "RegionOne"}); err != nil {
		t.Fatal(err)
	}
	etcd := set(good, "bucketName", "geb-bad-input")
	ac := newApplicationCredential(t)
	appCred := set(drop(good, "username", "password"), "applicationCredentialID", ac.ID, "applicationCredentialName", ac.Name, "applicationCredentialSecret", ac.Secret)
	authHost := strings.TrimPrefix(cloud.AuthURL, "http://")
	fresh := newContainerName

	// The rows every provider shares (apiVersion, kind, strict decoding, backupFreshness, bucket
	// names no store takes) are pkg/provider/all's TestSharedBadInput, run on every registered API.
	cases := []badInput{
		// providerConfig: strict decoding, every error with its field path.
		osConfigCase("unknown field", osConfigHead+"versionning: true\n", "providerConfig", "versionning"),
		osConfigCase("unknown nested field", osConfigHead+"generatedCredentials:\n  accesRules: false\n", "providerConfig", "generatedCredentials.accesRules"),
		osConfigCase("not YAML", "versioning: [true\n", "providerConfig"),
		osConfigCase("boolean given as a string", osConfigHead+"versioning: \"yes\"\n", "providerConfig.versioning", "true or false"),
		osConfigCase("object given as a list", osConfigHead+"generatedCredentials: []\n", "providerConfig.generatedCredentials", "object"),
		osConfigCase("list given as a string", osConfigHead+"generatedCredentials:\n  roles: member\n", "providerConfig.generatedCredentials.roles", "list"),
		osConfigCase("boolean given as a word", osConfigHead+"generatedCredentials:\n  accessRules: maybe\n", "providerConfig.generatedCredentials.accessRules", "true or false"),
		osConfigCase("boolean given as a number, in an inlined field", osConfigHead+"generatedCredentials:\n  allowPassThrough: 1\n", "providerConfig.generatedCredentials.allowPassThrough", "true or false"),
		osConfigCase("unparseable rotation period", osConfigHead+"generatedCredentials:\n  rotation:\n    period: monthly\n", "providerConfig.generatedCredentials.rotation.period"),
		osConfigCase("duration given as a number", osConfigHead+"generatedCredentials:\n  rotation:\n    gracePeriod: 24\n", "providerConfig.generatedCredentials.rotation.gracePeriod"),
		osConfigCase("rotation period under an hour", osConfigHead+"generatedCredentials:\n  rotation:\n    period: 30m\n", "providerConfig.generatedCredentials.rotation.period", "1h"),
		osConfigCase("negative grace period", osConfigHead+"generatedCredentials:\n  rotation:\n    gracePeriod: -1h\n", "providerConfig.generatedCredentials.rotation.gracePeriod", "negative"),
		osConfigCase("grace period not shorter than the period", osConfigHead+"generatedCredentials:\n  rotation:\n    period: 24h\n    gracePeriod: 24h\n", "providerConfig.generatedCredentials.rotation.gracePeriod"),
		osConfigCase("empty role", osConfigHead+"generatedCredentials:\n  roles: [member, \"\"]\n", "providerConfig.generatedCredentials.roles[1]"),
		osConfigCase("role with surrounding spaces", osConfigHead+"generatedCredentials:\n  roles: [\" member\"]\n", "providerConfig.generatedCredentials.roles[0]"),
		osConfigCase("duplicate role", osConfigHead+"generatedCredentials:\n  roles: [member, member]\n", "providerConfig.generatedCredentials.roles[1]"),
		osConfigCase("immutability, which Swift cannot honour", osConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n", "providerConfig.immutability", "Swift"),

		// Secrets: missing or empty keys, on bucket reconcile.
		{name: "secret: no authURL", data: drop(good, "authURL"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`}},
		{name: "secret: empty authURL", data: set(good, "authURL", ""), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`}},
		{name: "secret: no domainName", data: drop(good, "domainName"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"domainName"`}},
		{name: "secret: empty tenantName", data: set(good, "tenantName", ""), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"tenantName"`}},
		{name: "secret: no username", data: drop(good, "username"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"username"`}},
		{name: "secret: empty password", data: set(good, "password", ""), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"password"`}},
		{name: "secret: application credential secret without ID or name", data: set(drop(good, "username", "password"), "applicationCredentialSecret", "lonely-app-secret"), run: reconcileContainer(fresh(), "RegionOne"),
			want: objectstore.ErrInvalidConfig, names: []string{`"applicationCredentialID"`, `"applicationCredentialName"`}},
		{name: "secret: application credential ID and name without the secret", data: drop(appCred, "applicationCredentialSecret"), run: reconcileContainer(fresh(), "RegionOne"),
			want: objectstore.ErrInvalidConfig, names: []string{`"applicationCredentialSecret"`}},
		{name: "secret: application credential without its name (etcd-backup-restore needs it)", data: drop(appCred, "applicationCredentialName"), run: reconcileContainer(fresh(), "RegionOne"),
			want: objectstore.ErrInvalidConfig, names: []string{`"applicationCredentialName"`}},
		{name: "secret: application credential without its name, on a container that exists (Keystone accepts it, etcd-backup-restore does not)", data: drop(appCred, "applicationCredentialName"), run: reconcileContainer(existing, "RegionOne"),
			want: objectstore.ErrInvalidConfig, names: []string{`"applicationCredentialName"`}},
		{name: "secret: password keys mixed with an application credential secret alone", data: set(good, "applicationCredentialSecret", "mixed-app-secret"), run: reconcileContainer(fresh(), "RegionOne"),
			want: objectstore.ErrInvalidConfig, names: []string{`"applicationCredentialID"`}},
		{name: "secret: password keys mixed with an application credential lacking its name", data: set(good, "applicationCredentialID", ac.ID, "applicationCredentialSecret", ac.Secret), run: reconcileContainer(fresh(), "RegionOne"),
			want: objectstore.ErrInvalidConfig, names: []string{`"applicationCredentialName"`}},

		// Secrets: malformed values, on bucket reconcile.
		{name: "secret: authURL without a scheme", data: set(good, "authURL", authHost), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`, "http"}},
		{name: "secret: authURL host without a scheme", data: set(good, "authURL", "keystone.example.com/v3"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`}},
		{name: "secret: authURL not a URL", data: set(good, "authURL", "http://[::1"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`}},
		{name: "secret: authURL with an ftp scheme", data: set(good, "authURL", "ftp://"+authHost), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`, "http"}},
		{name: "secret: authURL without a host", data: set(good, "authURL", "https:///v3"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`, "host"}},
		{name: "secret: authURL with user info", data: set(good, "authURL", "http://demo:url-password-1@"+authHost), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`, "user"}},
		{name: "secret: authURL with a trailing newline", data: set(good, "authURL", cloud.AuthURL+"\n"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`}},
		{name: "secret: insecure not a boolean", data: set(good, "insecure", "maybe"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"insecure"`}},
		{name: "secret: insecure with a trailing newline", data: set(good, "insecure", "true\n"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"insecure"`}},
		{name: "secret: caCert not PEM", data: set(good, "caCert", "not-a-certificate-at-all"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"caCert"`}},
		{name: "secret: caCert a PEM block that is no certificate", data: set(good, "caCert", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"caCert"`}},
		{name: "secret: domainName with a trailing newline", data: set(good, "domainName", "Default\n"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"domainName"`}},
		{name: "secret: region with a trailing newline", data: set(good, "region", "RegionOne\n"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`secret key "region"`}},

		// Secrets: values Keystone or the catalog refuses.
		{name: "secret: wrong password", data: set(good, "password", "wrong-password-1"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrUnauthenticated, names: []string{`"username"`, `"password"`}},
		{name: "secret: unknown user", data: set(good, "username", "nobody"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrUnauthenticated, names: []string{`"username"`, `"password"`}},
		{name: "secret: unknown domainName", data: set(good, "domainName", "Nowhere"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrUnauthenticated, names: []string{`"domainName"`}},
		{name: "secret: unknown tenantName", data: set(good, "tenantName", "no-such-project"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrUnauthenticated, names: []string{`"tenantName"`}},
		{name: "secret: unknown applicationCredentialID", data: set(appCred, "applicationCredentialID", "0123456789abcdef0123456789abcdef"), run: reconcileContainer(fresh(), "RegionOne"),
			want: objectstore.ErrUnauthenticated, names: []string{`"applicationCredentialID"`, `"applicationCredentialSecret"`}},
		{name: "secret: wrong applicationCredentialSecret", data: set(appCred, "applicationCredentialSecret", "wrong-app-secret-1"), run: reconcileContainer(fresh(), "RegionOne"),
			want: objectstore.ErrUnauthenticated, names: []string{`"applicationCredentialID"`, `"applicationCredentialSecret"`}},
		{name: "secret: region without an object-store endpoint", data: set(good, "region", "Atlantis"), run: reconcileContainer(fresh(), "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"Atlantis"`, `secret key "region"`}},
		{name: "spec.region without an object-store endpoint", data: drop(good, "region"), run: reconcileContainer(fresh(), "Atlantis"), want: objectstore.ErrInvalidConfig, names: []string{`"Atlantis"`, "spec.region"}},
		{name: "secret: no region and no spec.region", data: drop(good, "region"), run: reconcileContainer(fresh(), ""), want: objectstore.ErrInvalidConfig, names: []string{`"region"`, "spec.region"}},

		// Entry deletion with wrong secrets.
		{name: "entry deletion: no password", data: drop(good, "password"), run: deleteEntryIn(existing, "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"password"`}},
		{name: "entry deletion: authURL without a scheme", data: set(good, "authURL", authHost), run: deleteEntryIn(existing, "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`}},
		{name: "entry deletion: authURL with user info", data: set(good, "authURL", "http://demo:url-password-2@"+authHost), run: deleteEntryIn(existing, "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`}},
		{name: "entry deletion: insecure not a boolean", data: set(good, "insecure", "maybe"), run: deleteEntryIn(existing, "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"insecure"`}},
		{name: "entry deletion: wrong password", data: set(good, "password", "wrong-password-2"), run: deleteEntryIn(existing, "RegionOne"), want: objectstore.ErrUnauthenticated, names: []string{`"username"`, `"password"`}},
		{name: "entry deletion: wrong applicationCredentialSecret", data: set(appCred, "applicationCredentialSecret", "wrong-app-secret-2"), run: deleteEntryIn(existing, "RegionOne"),
			want: objectstore.ErrUnauthenticated, names: []string{`"applicationCredentialSecret"`}},
		{name: "entry deletion: region without an object-store endpoint", data: set(good, "region", "Atlantis"), run: deleteEntryIn(existing, "RegionOne"), want: objectstore.ErrInvalidConfig, names: []string{`"Atlantis"`}},

		// etcd-backup: what etcd-backup-restore v0.43.0 could not use is refused.
		{name: "etcd-backup: authURL without a scheme", data: set(etcd, "authURL", authHost), run: writeEtcdBackupSecret, want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`}},
		{name: "etcd-backup: authURL with an ftp scheme", data: set(etcd, "authURL", "ftp://"+authHost), run: writeEtcdBackupSecret, want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`}},
		{name: "etcd-backup: authURL with user info", data: set(etcd, "authURL", "https://demo:url-password-3@"+authHost), run: writeEtcdBackupSecret, want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`}},
		{name: "etcd-backup: authURL with a trailing newline", data: set(etcd, "authURL", cloud.AuthURL+"\n"), run: writeEtcdBackupSecret, want: objectstore.ErrInvalidConfig, names: []string{`"authURL"`}},
		{name: "etcd-backup: tenantName with a trailing newline", data: set(etcd, "tenantName", "demo\n"), run: writeEtcdBackupSecret, want: objectstore.ErrInvalidConfig, names: []string{`"tenantName"`}},
		{name: "etcd-backup: username with a trailing newline", data: set(etcd, "username", "demo\n"), run: writeEtcdBackupSecret, want: objectstore.ErrInvalidConfig, names: []string{`"username"`}},
		{name: "etcd-backup: region with a trailing newline", data: set(etcd, "region", "RegionOne\n"), run: writeEtcdBackupSecret, want: objectstore.ErrInvalidConfig, names: []string{`"region"`}},
		{name: "etcd-backup: insecure not a boolean", data: set(etcd, "insecure", "maybe"), run: writeEtcdBackupSecret, want: objectstore.ErrInvalidConfig, names: []string{`"insecure"`}},
		{name: "etcd-backup: caCert not PEM", data: set(etcd, "caCert", "not-a-certificate-at-all"), run: writeEtcdBackupSecret, want: objectstore.ErrInvalidConfig, names: []string{`"caCert"`}},
		{name: "etcd-backup: bucketName with a slash", data: set(etcd, "bucketName", "geb/bad"), run: writeEtcdBackupSecret, want: objectstore.ErrInvalidConfig, names: []string{`"bucketName"`, "/"}},
		{name: "etcd-backup: application credential without its ID", data: set(drop(appCred, "applicationCredentialID"), "bucketName", "geb-bad-input", "username", "demo"), run: writeEtcdBackupSecret,
			want: objectstore.ErrInvalidConfig, names: []string{`"applicationCredentialID"`}},
	}

	// Names: Swift's container naming rules (swift/common/constraints.py and the proxy's
	// container controller), checked before any request.
	for _, n := range []struct{ name, bucket, rule string }{
		{"empty", "", "empty"},
		{"longer than 256 bytes", strings.Repeat("a", 257), "256"},
		{"256 bytes only in UTF-8", strings.Repeat("ä", 129), "256"},
		{"a slash", "backup/bucket", "/"},
		{"invalid UTF-8", "backup-\xff", "UTF-8"},
		{"a NUL character", "backup\x00bucket", "NUL"},
	} {
		cases = append(cases, badInput{name: "container name: " + n.name, data: good, run: reconcileContainer(n.bucket, "RegionOne"),
			want: objectstore.ErrInvalidConfig, names: []string{n.rule, "BackupBucket's name"}})
	}
	for _, bucket := range []string{"backup/bucket", strings.Repeat("b", 300)} {
		cases = append(cases, badInput{name: "entry deletion: spec.bucketName " + bucket[:min(len(bucket), 20)], data: good, run: deleteEntryIn(bucket, "RegionOne"),
			want: objectstore.ErrInvalidConfig, names: []string{"spec.bucketName"}})
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := accountContainers(t)
			err := c.run(t, c.data)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v; want %v", err, c.want)
			}
			t.Log(err)
			for _, n := range c.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("the message does not name %q: %v", n, err)
				}
			}
			for _, v := range append(secretValues(c.data), string(good["password"]), ac.Secret) {
				if strings.Contains(err.Error(), v) {
					t.Errorf("the message reveals a secret value: %v", err)
				}
			}
			if after := accountContainers(t); !slices.Equal(before, after) {
				t.Errorf("the account's containers changed: before %v, after %v", before, after)
			}
		})
	}
	if len(cases) < 30 {
		t.Fatalf("only %d wrong inputs", len(cases))
	}
}

// accountContainers lists the demo project's containers with their object counts and sizes (every
// bad input above uses its account).
func accountContainers(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	pc, err := gopenstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: cloud.AuthURL,
		Username: "demo", Password: "demopass", DomainName: "Default", TenantName: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := gopenstack.NewObjectStorageV1(pc, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := containers.List(sc, containers.ListOpts{}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := containers.ExtractInfo(pages)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range infos { // with their object count and size: a write changes them
		names = append(names, fmt.Sprintf("%s (%d objects, %d bytes)", c.Name, c.Count, c.Bytes))
	}
	slices.Sort(names)
	return names
}
