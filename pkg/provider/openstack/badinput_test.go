// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package openstack_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	gopenstack "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/containers"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/badinput"
)

// The wrong inputs of Swift and Keystone: the harness (test/badinput) checks that each is refused
// with its sentinel, naming its cause, showing no secret value, and that the demo project's
// containers are the same before and after.

var osConfigHead = badinput.Head(osapi.Type)

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
func deleteEntryIn(bucket string) func(*testing.T, map[string][]byte) error {
	const specRegion = "RegionOne" // the stand-in Keystone's region
	return func(_ *testing.T, data map[string][]byte) error {
		store, err := testProvider.NewDataPlane(context.Background(), provider.Credentials{Data: data, Region: specRegion})
		if err != nil {
			return err
		}
		return badinput.DeleteEntry(store, bucket)
	}
}

func writeEtcdBackupSecret(_ *testing.T, data map[string][]byte) error {
	be := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{Region: "RegionOne", BucketName: "geb-bad-input"}}
	_, err := testProvider.EtcdBackupSecretData(be, data)
	return err
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
	etcd := badinput.With(good, "bucketName", "geb-bad-input")
	ac := newApplicationCredential(t)
	appCred := badinput.With(badinput.Without(good, "username", "password"), "applicationCredentialID", ac.ID, "applicationCredentialName", ac.Name, "applicationCredentialSecret", ac.Secret)
	authHost := strings.TrimPrefix(cloud.AuthURL, "http://")
	fresh := newContainerName

	// The rows every provider shares (apiVersion, kind, strict decoding, backupFreshness, bucket
	// names no store takes) are badinput.Shared, run on every registered API by pkg/provider/all.
	cases := []badinput.Case{
		// providerConfig: strict decoding, every error with its field path.
		badinput.Config(osapi.API, "unknown field", osConfigHead+"versionning: true\n", "providerConfig", "versionning"),
		badinput.Config(osapi.API, "unknown nested field", osConfigHead+"generatedCredentials:\n  accesRules: false\n", "providerConfig", "generatedCredentials.accesRules"),
		badinput.Config(osapi.API, "not YAML", "versioning: [true\n", "providerConfig"),
		badinput.Config(osapi.API, "boolean given as a string", osConfigHead+"versioning: \"yes\"\n", "providerConfig.versioning", "true or false"),
		badinput.Config(osapi.API, "object given as a list", osConfigHead+"generatedCredentials: []\n", "providerConfig.generatedCredentials", "object"),
		badinput.Config(osapi.API, "list given as a string", osConfigHead+"generatedCredentials:\n  roles: member\n", "providerConfig.generatedCredentials.roles", "list"),
		badinput.Config(osapi.API, "boolean given as a word", osConfigHead+"generatedCredentials:\n  accessRules: maybe\n", "providerConfig.generatedCredentials.accessRules", "true or false"),
		badinput.Config(osapi.API, "boolean given as a number, in an inlined field", osConfigHead+"generatedCredentials:\n  allowPassThrough: 1\n", "providerConfig.generatedCredentials.allowPassThrough", "true or false"),
		badinput.Config(osapi.API, "unparseable rotation period", osConfigHead+"generatedCredentials:\n  rotation:\n    period: monthly\n", "providerConfig.generatedCredentials.rotation.period"),
		badinput.Config(osapi.API, "duration given as a number", osConfigHead+"generatedCredentials:\n  rotation:\n    gracePeriod: 24\n", "providerConfig.generatedCredentials.rotation.gracePeriod"),
		badinput.Config(osapi.API, "rotation period under an hour", osConfigHead+"generatedCredentials:\n  rotation:\n    period: 30m\n", "providerConfig.generatedCredentials.rotation.period", "1h"),
		badinput.Config(osapi.API, "negative grace period", osConfigHead+"generatedCredentials:\n  rotation:\n    gracePeriod: -1h\n", "providerConfig.generatedCredentials.rotation.gracePeriod", "negative"),
		badinput.Config(osapi.API, "grace period not shorter than the period", osConfigHead+"generatedCredentials:\n  rotation:\n    period: 24h\n    gracePeriod: 24h\n", "providerConfig.generatedCredentials.rotation.gracePeriod"),
		badinput.Config(osapi.API, "empty role", osConfigHead+"generatedCredentials:\n  roles: [member, \"\"]\n", "providerConfig.generatedCredentials.roles[1]"),
		badinput.Config(osapi.API, "role with surrounding spaces", osConfigHead+"generatedCredentials:\n  roles: [\" member\"]\n", "providerConfig.generatedCredentials.roles[0]"),
		badinput.Config(osapi.API, "duplicate role", osConfigHead+"generatedCredentials:\n  roles: [member, member]\n", "providerConfig.generatedCredentials.roles[1]"),
		badinput.Config(osapi.API, "immutability, which Swift cannot honour", osConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n", "providerConfig.immutability", "Swift"),

		// Secrets: missing or empty keys, on bucket reconcile.
		{Name: "secret: no authURL", Data: badinput.Without(good, "authURL"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`}},
		{Name: "secret: empty authURL", Data: badinput.With(good, "authURL", ""), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`}},
		{Name: "secret: no domainName", Data: badinput.Without(good, "domainName"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"domainName"`}},
		{Name: "secret: empty tenantName", Data: badinput.With(good, "tenantName", ""), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"tenantName"`}},
		{Name: "secret: no username", Data: badinput.Without(good, "username"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"username"`}},
		{Name: "secret: empty password", Data: badinput.With(good, "password", ""), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"password"`}},
		{Name: "secret: application credential secret without ID or name", Data: badinput.With(badinput.Without(good, "username", "password"), "applicationCredentialSecret", "lonely-app-secret"), Run: reconcileContainer(fresh(), "RegionOne"),
			Want: objectstore.ErrInvalidConfig, Names: []string{`"applicationCredentialID"`, `"applicationCredentialName"`}},
		{Name: "secret: application credential ID and name without the secret", Data: badinput.Without(appCred, "applicationCredentialSecret"), Run: reconcileContainer(fresh(), "RegionOne"),
			Want: objectstore.ErrInvalidConfig, Names: []string{`"applicationCredentialSecret"`}},
		{Name: "secret: application credential without its name (etcd-backup-restore needs it)", Data: badinput.Without(appCred, "applicationCredentialName"), Run: reconcileContainer(fresh(), "RegionOne"),
			Want: objectstore.ErrInvalidConfig, Names: []string{`"applicationCredentialName"`}},
		{Name: "secret: application credential without its name, on a container that exists (Keystone accepts it, etcd-backup-restore does not)", Data: badinput.Without(appCred, "applicationCredentialName"), Run: reconcileContainer(existing, "RegionOne"),
			Want: objectstore.ErrInvalidConfig, Names: []string{`"applicationCredentialName"`}},
		{Name: "secret: password keys mixed with an application credential secret alone", Data: badinput.With(good, "applicationCredentialSecret", "mixed-app-secret"), Run: reconcileContainer(fresh(), "RegionOne"),
			Want: objectstore.ErrInvalidConfig, Names: []string{`"applicationCredentialID"`}},
		{Name: "secret: password keys mixed with an application credential lacking its name", Data: badinput.With(good, "applicationCredentialID", ac.ID, "applicationCredentialSecret", ac.Secret), Run: reconcileContainer(fresh(), "RegionOne"),
			Want: objectstore.ErrInvalidConfig, Names: []string{`"applicationCredentialName"`}},

		// Secrets: malformed values, on bucket reconcile.
		{Name: "secret: authURL without a scheme", Data: badinput.With(good, "authURL", authHost), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`, "http"}},
		{Name: "secret: authURL host without a scheme", Data: badinput.With(good, "authURL", "keystone.example.com/v3"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`}},
		{Name: "secret: authURL not a URL", Data: badinput.With(good, "authURL", "http://[::1"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`}},
		{Name: "secret: authURL with an ftp scheme", Data: badinput.With(good, "authURL", "ftp://"+authHost), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`, "http"}},
		{Name: "secret: authURL without a host", Data: badinput.With(good, "authURL", "https:///v3"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`, "host"}},
		{Name: "secret: authURL with user info", Data: badinput.With(good, "authURL", "http://demo:url-password-1@"+authHost), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`, "user"}},
		{Name: "secret: authURL with a trailing newline", Data: badinput.With(good, "authURL", cloud.AuthURL+"\n"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`}},
		{Name: "secret: insecure not a boolean", Data: badinput.With(good, "insecure", "maybe"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"insecure"`}},
		{Name: "secret: insecure with a trailing newline", Data: badinput.With(good, "insecure", "true\n"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"insecure"`}},
		{Name: "secret: caCert not PEM", Data: badinput.With(good, "caCert", "not-a-certificate-at-all"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"caCert"`}},
		{Name: "secret: caCert a PEM block that is no certificate", Data: badinput.With(good, "caCert", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"caCert"`}},
		{Name: "secret: domainName with a trailing newline", Data: badinput.With(good, "domainName", "Default\n"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"domainName"`}},
		{Name: "secret: region with a trailing newline", Data: badinput.With(good, "region", "RegionOne\n"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`secret key "region"`}},

		// Secrets: values Keystone or the catalog refuses.
		{Name: "secret: wrong password", Data: badinput.With(good, "password", "wrong-password-1"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrUnauthenticated, Names: []string{`"username"`, `"password"`}},
		{Name: "secret: unknown user", Data: badinput.With(good, "username", "nobody"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrUnauthenticated, Names: []string{`"username"`, `"password"`}},
		{Name: "secret: unknown domainName", Data: badinput.With(good, "domainName", "Nowhere"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrUnauthenticated, Names: []string{`"domainName"`}},
		{Name: "secret: unknown tenantName", Data: badinput.With(good, "tenantName", "no-such-project"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrUnauthenticated, Names: []string{`"tenantName"`}},
		{Name: "secret: unknown applicationCredentialID", Data: badinput.With(appCred, "applicationCredentialID", "0123456789abcdef0123456789abcdef"), Run: reconcileContainer(fresh(), "RegionOne"),
			Want: objectstore.ErrUnauthenticated, Names: []string{`"applicationCredentialID"`, `"applicationCredentialSecret"`}},
		{Name: "secret: wrong applicationCredentialSecret", Data: badinput.With(appCred, "applicationCredentialSecret", "wrong-app-secret-1"), Run: reconcileContainer(fresh(), "RegionOne"),
			Want: objectstore.ErrUnauthenticated, Names: []string{`"applicationCredentialID"`, `"applicationCredentialSecret"`}},
		{Name: "secret: region without an object-store endpoint", Data: badinput.With(good, "region", "Atlantis"), Run: reconcileContainer(fresh(), "RegionOne"), Want: objectstore.ErrInvalidConfig, Names: []string{`"Atlantis"`, `secret key "region"`}},
		{Name: "spec.region without an object-store endpoint", Data: badinput.Without(good, "region"), Run: reconcileContainer(fresh(), "Atlantis"), Want: objectstore.ErrInvalidConfig, Names: []string{`"Atlantis"`, "spec.region"}},
		{Name: "secret: no region and no spec.region", Data: badinput.Without(good, "region"), Run: reconcileContainer(fresh(), ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"region"`, "spec.region"}},

		// Entry deletion with wrong secrets.
		{Name: "entry deletion: no password", Data: badinput.Without(good, "password"), Run: deleteEntryIn(existing), Want: objectstore.ErrInvalidConfig, Names: []string{`"password"`}},
		{Name: "entry deletion: authURL without a scheme", Data: badinput.With(good, "authURL", authHost), Run: deleteEntryIn(existing), Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`}},
		{Name: "entry deletion: authURL with user info", Data: badinput.With(good, "authURL", "http://demo:url-password-2@"+authHost), Run: deleteEntryIn(existing), Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`}},
		{Name: "entry deletion: insecure not a boolean", Data: badinput.With(good, "insecure", "maybe"), Run: deleteEntryIn(existing), Want: objectstore.ErrInvalidConfig, Names: []string{`"insecure"`}},
		{Name: "entry deletion: wrong password", Data: badinput.With(good, "password", "wrong-password-2"), Run: deleteEntryIn(existing), Want: objectstore.ErrUnauthenticated, Names: []string{`"username"`, `"password"`}},
		{Name: "entry deletion: wrong applicationCredentialSecret", Data: badinput.With(appCred, "applicationCredentialSecret", "wrong-app-secret-2"), Run: deleteEntryIn(existing),
			Want: objectstore.ErrUnauthenticated, Names: []string{`"applicationCredentialSecret"`}},
		{Name: "entry deletion: region without an object-store endpoint", Data: badinput.With(good, "region", "Atlantis"), Run: deleteEntryIn(existing), Want: objectstore.ErrInvalidConfig, Names: []string{`"Atlantis"`}},

		// etcd-backup: what etcd-backup-restore v0.43.0 could not use is refused.
		{Name: "etcd-backup: authURL without a scheme", Data: badinput.With(etcd, "authURL", authHost), Run: writeEtcdBackupSecret, Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`}},
		{Name: "etcd-backup: authURL with an ftp scheme", Data: badinput.With(etcd, "authURL", "ftp://"+authHost), Run: writeEtcdBackupSecret, Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`}},
		{Name: "etcd-backup: authURL with user info", Data: badinput.With(etcd, "authURL", "https://demo:url-password-3@"+authHost), Run: writeEtcdBackupSecret, Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`}},
		{Name: "etcd-backup: authURL with a trailing newline", Data: badinput.With(etcd, "authURL", cloud.AuthURL+"\n"), Run: writeEtcdBackupSecret, Want: objectstore.ErrInvalidConfig, Names: []string{`"authURL"`}},
		{Name: "etcd-backup: tenantName with a trailing newline", Data: badinput.With(etcd, "tenantName", "demo\n"), Run: writeEtcdBackupSecret, Want: objectstore.ErrInvalidConfig, Names: []string{`"tenantName"`}},
		{Name: "etcd-backup: username with a trailing newline", Data: badinput.With(etcd, "username", "demo\n"), Run: writeEtcdBackupSecret, Want: objectstore.ErrInvalidConfig, Names: []string{`"username"`}},
		{Name: "etcd-backup: region with a trailing newline", Data: badinput.With(etcd, "region", "RegionOne\n"), Run: writeEtcdBackupSecret, Want: objectstore.ErrInvalidConfig, Names: []string{`"region"`}},
		{Name: "etcd-backup: insecure not a boolean", Data: badinput.With(etcd, "insecure", "maybe"), Run: writeEtcdBackupSecret, Want: objectstore.ErrInvalidConfig, Names: []string{`"insecure"`}},
		{Name: "etcd-backup: caCert not PEM", Data: badinput.With(etcd, "caCert", "not-a-certificate-at-all"), Run: writeEtcdBackupSecret, Want: objectstore.ErrInvalidConfig, Names: []string{`"caCert"`}},
		{Name: "etcd-backup: bucketName with a slash", Data: badinput.With(etcd, "bucketName", "geb/bad"), Run: writeEtcdBackupSecret, Want: objectstore.ErrInvalidConfig, Names: []string{`"bucketName"`, "/"}},
		{Name: "etcd-backup: application credential without its ID", Data: badinput.With(badinput.Without(appCred, "applicationCredentialID"), "bucketName", "geb-bad-input", "username", "demo"), Run: writeEtcdBackupSecret,
			Want: objectstore.ErrInvalidConfig, Names: []string{`"applicationCredentialID"`}},
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
		cases = append(cases, badinput.Case{Name: "container name: " + n.name, Data: good, Run: reconcileContainer(n.bucket, "RegionOne"),
			Want: objectstore.ErrInvalidConfig, Names: []string{n.rule, "BackupBucket's name"}})
	}
	for _, bucket := range []string{"backup/bucket", strings.Repeat("b", 300)} {
		cases = append(cases, badinput.Case{Name: "entry deletion: spec.bucketName " + bucket[:min(len(bucket), 20)], Data: good, Run: deleteEntryIn(bucket),
			Want: objectstore.ErrInvalidConfig, Names: []string{"spec.bucketName"}})
	}

	badinput.Run(t, badinput.Harness{State: accountContainers, AtLeast: 30, Secrets: func(data map[string][]byte) []string {
		return append(secretValues(data), string(good["password"]), ac.Secret)
	}}, cases)
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
