// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/api/iterator"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/badinput"
)

// The wrong inputs of GCS: the harness (test/badinput) checks that each is refused with its
// sentinel, naming its cause, showing no secret value, and that the store holds the same buckets,
// unchanged, before and after.

var providerConfigHead = badinput.Head(gcpapi.Type)

// action is what the extension does with a secret's data, as a key secret or (wi) a workload
// identity secret.
type action func(t *testing.T, data map[string][]byte, wi bool) error

// asKey runs a on a service-account key secret, asWI on a workload identity secret.
func asKey(a action) func(*testing.T, map[string][]byte) error {
	return func(t *testing.T, data map[string][]byte) error { return a(t, data, false) }
}

func asWI(a action) func(*testing.T, map[string][]byte) error {
	return func(t *testing.T, data map[string][]byte) error { return a(t, data, true) }
}

func storeFor(data map[string][]byte, wi bool, specRegion string) (conformance.Stores, error) {
	return storesWith(data, wi, specRegion, nil)
}

// reconcileBucket does what the BackupBucket actuator does: a store from the secret, then
// EnsureBucket with the bucket's name and spec.region.
func reconcileBucket(bucket, specRegion string) func(*testing.T, map[string][]byte, bool) error {
	return func(_ *testing.T, data map[string][]byte, wi bool) error {
		store, err := storeFor(data, wi, specRegion)
		if err != nil {
			return err
		}
		return store.EnsureBucket(context.Background(), objectstore.Bucket{Name: bucket, Region: specRegion})
	}
}

// deleteEntry does what the BackupEntry delegate does on deletion: a store from the secret, then
// the deletion engine on the entry's prefix in spec.bucketName.
func deleteEntry(bucket string) func(*testing.T, map[string][]byte, bool) error {
	return func(_ *testing.T, data map[string][]byte, wi bool) error {
		store, err := storeFor(data, wi, region)
		if err != nil {
			return err
		}
		return badinput.DeleteEntry(store, bucket)
	}
}

// deleteBucket does what the BackupBucket actuator does on deletion.
func deleteBucket(bucket string) func(*testing.T, map[string][]byte, bool) error {
	return func(_ *testing.T, data map[string][]byte, wi bool) error {
		store, err := storeFor(data, wi, region)
		if err != nil {
			return err
		}
		return store.DeleteBucket(context.Background(), bucket)
	}
}

func writeEtcdBackup(_ *testing.T, data map[string][]byte, _ bool) error {
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--garden--bad-input"},
		Spec: extensionsv1alpha1.BackupEntrySpec{Region: region, BucketName: "geb-bad-input"}}
	_, err := testProvider.EtcdBackupSecretData(be, data)
	return err
}

// keyFile returns the secret's service-account key file with fields set (nil: removed).
func keyFile(t testing.TB, data map[string][]byte, fields map[string]any) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data["serviceaccount.json"], &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range fields {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// sidecarWorkloadIdentityConfig is a workload identity "config" key that etcd-backup-restore
// accepts (token_url at Google's STS), with fields of its credentials configuration overridden.
func sidecarWorkloadIdentityConfig(projectID string, override map[string]string) []byte {
	cc := map[string]string{
		"type":               "external_account",
		"audience":           "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/gardener/providers/seed",
		"subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
		"token_url":          "https://sts.googleapis.com/v1/token",
	}
	maps.Copy(cc, override)
	raw, _ := json.Marshal(cc)
	out, _ := json.Marshal(map[string]any{
		"apiVersion": "gcp.provider.extensions.gardener.cloud/v1alpha1", "kind": "WorkloadIdentityConfig",
		"projectID": projectID, "credentialsConfig": json.RawMessage(raw),
	})
	return out
}

func TestBadInputIsRefusedNamingItsCauseAndTouchesNothing(t *testing.T) {
	good := gcs.SecretData()
	// A bucket of ours in another location than the tests' spec.region, for the location cases.
	elsewhere := newBucketName()
	if err := reconcileBucket(elsewhere, "us-east1")(t, good, false); err != nil {
		t.Fatal(err)
	}
	// Workload identity: a subject token the front's STS accepts, and one it does not know.
	wi := map[string][]byte{"config": gcs.WorkloadIdentityConfig("bad-input-subject-token"), "token": []byte("bad-input-subject-token"), "storageAPIEndpoint": good["storageAPIEndpoint"]}
	etcd := badinput.With(good, "bucketName", "geb-bad-input")
	etcdWI := map[string][]byte{"config": sidecarWorkloadIdentityConfig(gcs.ProjectID, nil), "bucketName": []byte("geb-bad-input")}
	revoked := gcs.SecretData()
	gcs.RevokeServiceAccountKey(revokedEmail(t, revoked))
	fresh := newBucketName // a name that is valid and not taken
	const sa = `"serviceaccount.json"`

	// The rows every provider shares (apiVersion, kind, strict decoding, backupFreshness, bucket
	// names no store takes) are badinput.Shared, run on every registered API by pkg/provider/all.
	cases := []badinput.Case{
		// providerConfig: strict decoding, every error with its field path.
		badinput.Config(gcpapi.API, "unknown field", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  mode: compliance\n", "providerConfig", "immutability.mode"),
		badinput.Config(gcpapi.API, "unknown top-level field", providerConfigHead+"versioning: true\n", "providerConfig", "versioning"),
		badinput.Config(gcpapi.API, "wrong apiVersion", "apiVersion: gcp.provider.extensions.gardener.cloud/v1beta1\nkind: BackupBucketConfig\n", "providerConfig.apiVersion"),
		badinput.Config(gcpapi.API, "object given as a boolean", providerConfigHead+"immutability: yes\n", "providerConfig.immutability"),
		badinput.Config(gcpapi.API, "map given as a list", providerConfigHead+"labels: [team]\n", "providerConfig.labels"),
		badinput.Config(gcpapi.API, "boolean given as a string", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  locked: maybe\n", "providerConfig.immutability.locked"),
		badinput.Config(gcpapi.API, "string given as a number", providerConfigHead+"immutability:\n  retentionType: 3\n  retentionPeriod: 24h\n", "providerConfig.immutability.retentionType"),
		badinput.Config(gcpapi.API, "boolean given as a string, in an inlined field", providerConfigHead+"generatedCredentials:\n  allowPassThrough: maybe\n", "providerConfig.generatedCredentials.allowPassThrough"),
		badinput.Config(gcpapi.API, "duration given as a number", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(gcpapi.API, "unparseable duration", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: forever\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(gcpapi.API, "negative retention period", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: -48h\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(gcpapi.API, "retention period not whole seconds", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h0.5s\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(gcpapi.API, "retention period beyond GCS's 100 years", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 876600h1s\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(gcpapi.API, "negative soft delete", providerConfigHead+"softDelete:\n  retentionDuration: -168h\n", "providerConfig.softDelete.retentionDuration"),
		badinput.Config(gcpapi.API, "soft delete not whole days", providerConfigHead+"softDelete:\n  retentionDuration: 180h\n", "providerConfig.softDelete.retentionDuration"),
		badinput.Config(gcpapi.API, "soft delete shorter than GCS's 7 days", providerConfigHead+"softDelete:\n  retentionDuration: 72h\n", "providerConfig.softDelete.retentionDuration"),
		badinput.Config(gcpapi.API, "soft delete longer than GCS's 90 days", providerConfigHead+"softDelete:\n  retentionDuration: 2184h\n", "providerConfig.softDelete.retentionDuration"),
		badinput.Config(gcpapi.API, "unknown retention type", providerConfigHead+"immutability:\n  retentionType: object\n  retentionPeriod: 24h\n", "providerConfig.immutability.retentionType"),
		badinput.Config(gcpapi.API, "upper-case label key", providerConfigHead+"labels:\n  Team: a\n", "providerConfig.labels[Team]"),
		badinput.Config(gcpapi.API, "label value with a dot", providerConfigHead+"labels:\n  team: a.b\n", "providerConfig.labels[team]"),
		badinput.Config(gcpapi.API, "the extension's own label", providerConfigHead+"labels:\n  managed-by: me\n", "providerConfig.labels[managed-by]"),
		badinput.Config(gcpapi.API, "more labels than GCS allows besides the extension's", providerConfigHead+manyLabels(64), "providerConfig.labels"),
		badinput.Config(gcpapi.API, "unparseable rotation period", providerConfigHead+"generatedCredentials:\n  rotation:\n    period: monthly\n", "providerConfig.generatedCredentials.rotation.period"),
		badinput.Config(gcpapi.API, "grace period not shorter than the rotation period", providerConfigHead+"generatedCredentials:\n  rotation:\n    period: 24h\n    gracePeriod: 25h\n", "providerConfig.generatedCredentials.rotation.gracePeriod"),

		// Secrets: on bucket reconcile.
		{Name: "secret: no serviceaccount.json", Data: badinput.Without(good, "serviceaccount.json"), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa}},
		{Name: "secret: empty serviceaccount.json", Data: badinput.With(good, "serviceaccount.json", ""), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa}},
		{Name: "secret: serviceaccount.json not JSON", Data: badinput.With(good, "serviceaccount.json", "private-key-not-json-at-all"), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa, "not a service-account key file"}},
		{Name: "secret: serviceaccount.json a JSON list", Data: badinput.With(good, "serviceaccount.json", `["a-json-list-of-things"]`), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa}},
		{Name: "secret: serviceaccount.json with a number for type", Data: badinput.With(good, "serviceaccount.json", keyFile(t, good, map[string]any{"type": 7})), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa, `"type"`}},
		{Name: "secret: serviceaccount.json an external account", Data: badinput.With(good, "serviceaccount.json", keyFile(t, good, map[string]any{"type": "external_account"})), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa, `"external_account"`}},
		{Name: "secret: serviceaccount.json a user's credentials", Data: badinput.With(good, "serviceaccount.json", keyFile(t, good, map[string]any{"type": "authorized_user"})), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa, `"authorized_user"`}},
		{Name: "secret: serviceaccount.json without project_id", Data: badinput.With(good, "serviceaccount.json", keyFile(t, good, map[string]any{"project_id": nil})), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa, "project_id"}},
		{Name: "secret: serviceaccount.json without client_email", Data: badinput.With(good, "serviceaccount.json", keyFile(t, good, map[string]any{"client_email": nil})), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa, "client_email"}},
		{Name: "secret: serviceaccount.json without private_key", Data: badinput.With(good, "serviceaccount.json", keyFile(t, good, map[string]any{"private_key": nil})), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa, "private_key"}},
		{Name: "secret: private_key not PEM", Data: badinput.With(good, "serviceaccount.json", keyFile(t, good, map[string]any{"private_key": "secret-material-not-pem"})), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa, "private_key", "PEM"}},
		{Name: "secret: private_key a PEM block without a key", Data: badinput.With(good, "serviceaccount.json", keyFile(t, good, map[string]any{"private_key": "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LW1hdGVyaWFsLW5vdC1hLWtleQ==\n-----END PRIVATE KEY-----\n"})), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa, "private_key"}},
		{Name: "secret: a key the token endpoint refuses", Data: revoked, Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrUnauthenticated, Names: []string{sa, "refused"}},
		{Name: "secret: storageAPIEndpoint not absolute", Data: badinput.With(good, "storageAPIEndpoint", "storage.googleapis.com/storage/v1/"), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAPIEndpoint"`}},
		{Name: "secret: storageAPIEndpoint with an unclosed IPv6 bracket", Data: badinput.With(good, "storageAPIEndpoint", "http://[::1"), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAPIEndpoint"`}},
		{Name: "secret: storageAPIEndpoint with an ftp scheme", Data: badinput.With(good, "storageAPIEndpoint", "ftp://storage.googleapis.com/"), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAPIEndpoint"`, "https"}},
		{Name: "secret: storageAPIEndpoint plain http off loopback", Data: badinput.With(good, "storageAPIEndpoint", "http://storage.googleapis.com/storage/v1/"), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAPIEndpoint"`, "loopback"}},
		{Name: "secret: storageAPIEndpoint with credentials in it", Data: badinput.With(good, "storageAPIEndpoint", "https://user:endpoint-password@storage.googleapis.com/"), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAPIEndpoint"`, "credentials"}},
		{Name: "secret: storageAPIEndpoint with a query", Data: badinput.With(good, "storageAPIEndpoint", "https://storage.googleapis.com/storage/v1/?key=api-key-value"), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAPIEndpoint"`}},
		{Name: "secret: storageAPIEndpoint with another path", Data: badinput.With(good, "storageAPIEndpoint", "https://storage.googleapis.com/upload/storage/v1/"), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAPIEndpoint"`, "path"}},
		{Name: "secret: storageAPIEndpoint with a trailing newline", Data: badinput.With(good, "storageAPIEndpoint", string(good["storageAPIEndpoint"])+"\n"), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAPIEndpoint"`, "newline"}},

		// Secrets: credential modes the provider cannot use.
		{Name: "secret: workload identity with a service-account key too", Data: badinput.With(wi, "serviceaccount.json", string(good["serviceaccount.json"])), Run: asWI(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{sa, `"config"`, `"token"`}},
		{Name: "secret: service-account key with a workload identity config", Data: badinput.With(good, "config", string(wi["config"])), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{`"config"`, "not a workload identity secret"}},
		{Name: "secret: service-account key with a token", Data: badinput.With(good, "token", "stray-token-value"), Run: asKey(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{`"token"`, "not a workload identity secret"}},

		// Workload identity configuration.
		{Name: "workload identity: no config", Data: badinput.Without(wi, "config"), Run: asWI(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{`"config"`}},
		{Name: "workload identity: config not YAML", Data: badinput.With(wi, "config", "{{{"), Run: asWI(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{"config"}},
		{Name: "workload identity: config of another kind", Data: badinput.With(wi, "config", "apiVersion: gcp.provider.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"), Run: asWI(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{"config.kind"}},
		{Name: "workload identity: no projectID", Data: badinput.With(wi, "config", string(sidecarWorkloadIdentityConfig("", nil))), Run: asWI(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{"config.projectID"}},
		{Name: "workload identity: credentialsConfig a service account", Data: badinput.With(wi, "config", string(sidecarWorkloadIdentityConfig(gcs.ProjectID, map[string]string{"type": "service_account"}))), Run: asWI(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{"config.credentialsConfig.type"}},
		{Name: "workload identity: credentialsConfig without token_url", Data: badinput.With(wi, "config", string(sidecarWorkloadIdentityConfig(gcs.ProjectID, map[string]string{"token_url": ""}))), Run: asWI(reconcileBucket(fresh(), region)), Want: objectstore.ErrInvalidConfig, Names: []string{"config.credentialsConfig.token_url"}},
		{Name: "workload identity: no token yet", Data: badinput.Without(wi, "token"), Run: asWI(reconcileBucket(fresh(), region)), Want: objectstore.ErrUnauthenticated, Names: []string{`"token"`}},
		{Name: "workload identity: a token the STS refuses", Data: badinput.With(wi, "token", "unknown-subject-token"), Run: asWI(reconcileBucket(fresh(), region)), Want: objectstore.ErrUnauthenticated, Names: []string{`"token"`, "refused"}},

		// Locations.
		{Name: "location: existing bucket in another location than spec.region", Data: good, Run: asKey(reconcileBucket(elsewhere, region)), Want: objectstore.ErrInvalidConfig, Names: []string{elsewhere, `"US-EAST1"`, `"` + region + `"`, "spec.region"}},
		{Name: "location: spec.region with an underscore", Data: good, Run: asKey(reconcileBucket(fresh(), "europe_west1")), Want: objectstore.ErrInvalidConfig, Names: []string{"spec.region", "europe_west1"}},
		{Name: "location: spec.region with a trailing newline", Data: good, Run: asKey(reconcileBucket(fresh(), region+"\n")), Want: objectstore.ErrInvalidConfig, Names: []string{"spec.region"}},
		{Name: "location: no spec.region", Data: good, Run: asKey(reconcileBucket(fresh(), "")), Want: objectstore.ErrInvalidConfig, Names: []string{"spec.region"}},
		{Name: "ownership: a name another project holds", Data: good, Run: asKey(reconcileBucket("foreign-"+fresh(), region)), Want: objectstore.ErrOwnedByOther, Names: []string{"foreign-", "another project"}},

		// Entry and bucket deletion.
		{Name: "entry deletion: malformed storageAPIEndpoint", Data: badinput.With(good, "storageAPIEndpoint", "ftp://x"), Run: asKey(deleteEntry(elsewhere)), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAPIEndpoint"`}},
		{Name: "entry deletion: serviceaccount.json not JSON", Data: badinput.With(good, "serviceaccount.json", "private-key-not-json-at-all"), Run: asKey(deleteEntry(elsewhere)), Want: objectstore.ErrInvalidConfig, Names: []string{sa}},
		{Name: "entry deletion: a key the token endpoint refuses", Data: revoked, Run: asKey(deleteEntry(elsewhere)), Want: objectstore.ErrUnauthenticated, Names: []string{sa, elsewhere}},
		{Name: "entry deletion: workload identity without a token", Data: badinput.Without(wi, "token"), Run: asWI(deleteEntry(elsewhere)), Want: objectstore.ErrUnauthenticated, Names: []string{`"token"`}},
		{Name: "bucket deletion: a key the token endpoint refuses", Data: revoked, Run: asKey(deleteBucket(elsewhere)), Want: objectstore.ErrUnauthenticated, Names: []string{sa}},
		{Name: "bucket deletion: serviceaccount.json without private_key", Data: badinput.With(good, "serviceaccount.json", keyFile(t, good, map[string]any{"private_key": nil})), Run: asKey(deleteBucket(elsewhere)), Want: objectstore.ErrInvalidConfig, Names: []string{sa, "private_key"}},

		// etcd-backup: what etcd-backup-restore v0.43.0 could not use is refused, naming the key.
		{Name: "etcd-backup: no serviceaccount.json", Data: badinput.Without(etcd, "serviceaccount.json"), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{sa}},
		{Name: "etcd-backup: serviceaccount.json an external account", Data: badinput.With(etcd, "serviceaccount.json", keyFile(t, etcd, map[string]any{"type": "external_account"})), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{sa}},
		{Name: "etcd-backup: project_id the sidecar refuses", Data: badinput.With(etcd, "serviceaccount.json", keyFile(t, etcd, map[string]any{"project_id": "My_Project"})), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{sa, "project_id", "My_Project"}},
		{Name: "etcd-backup: a key file field the sidecar refuses", Data: badinput.With(etcd, "serviceaccount.json", keyFile(t, etcd, map[string]any{"quota_project_id": "other-project"})), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{sa, `"quota_project_id"`}},
		{Name: "etcd-backup: storageAPIEndpoint with a trailing newline", Data: badinput.With(etcd, "storageAPIEndpoint", "https://storage.googleapis.com/storage/v1/\n"), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAPIEndpoint"`}},
		{Name: "etcd-backup: storageAPIEndpoint with an ftp scheme", Data: badinput.With(etcd, "storageAPIEndpoint", "ftp://x"), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{`"storageAPIEndpoint"`}},
		{Name: "etcd-backup: both a key and a workload identity", Data: badinput.With(etcd, "config", string(etcdWI["config"])), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{sa, `"config"`}},
		{Name: "etcd-backup: bucketName breaking GCS's rules", Data: badinput.With(etcd, "bucketName", "Geb-Bad-Input"), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{`"bucketName"`, "Geb-Bad-Input", "lowercase"}},
		{Name: "etcd-backup: workload identity config not decodable", Data: badinput.With(etcdWI, "config", "{{{"), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{"config"}},
		{Name: "etcd-backup: workload identity token_url not Google's STS", Data: badinput.With(etcdWI, "config", string(gcs.WorkloadIdentityConfig("etcd-subject-token"))), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{`"config"`, "config.credentialsConfig.token_url", "https://sts.googleapis.com/v1/token"}},
		{Name: "etcd-backup: workload identity subject_token_type not a JWT", Data: badinput.With(etcdWI, "config", string(sidecarWorkloadIdentityConfig(gcs.ProjectID, map[string]string{"subject_token_type": "urn:ietf:params:oauth:token-type:saml2"}))), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{"config.credentialsConfig.subject_token_type"}},
		{Name: "etcd-backup: workload identity impersonation URL the sidecar refuses", Data: badinput.With(etcdWI, "config", string(sidecarWorkloadIdentityConfig(gcs.ProjectID, map[string]string{"service_account_impersonation_url": "https://example.com/impersonate"}))), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{"config.credentialsConfig.service_account_impersonation_url"}},
		{Name: "etcd-backup: workload identity projectID the sidecar refuses", Data: badinput.With(etcdWI, "config", string(sidecarWorkloadIdentityConfig("p1", nil))), Run: asKey(writeEtcdBackup), Want: objectstore.ErrInvalidConfig, Names: []string{"config.projectID", `"p1"`}},
	}

	// Names: every GCS bucket naming rule, checked before any request.
	for _, n := range []struct{ name, bucket, rule string }{
		{"longer than 63 characters without dots", strings.Repeat("a", 64), "3 to 63"},
		{"shorter than 3 characters", "ab", "3 to 63"},
		{"longer than 222 characters with dots", strings.Repeat(strings.Repeat("a", 60)+".", 3) + strings.Repeat("a", 42), "222"},
		{"a dot-separated part longer than 63", strings.Repeat("a", 64) + ".backup", "dot-separated part"},
		{"two adjacent dots", "backup..bucket", "dot-separated part"},
		{"uppercase", "Backup-Bucket", "lowercase"},
		{"a space", "backup bucket", "lowercase"},
		{"a slash", "backup/bucket", "lowercase"},
		{"a leading dot", ".backup", "begin"},
		{"a leading dash", "-backup", "begin"},
		{"a leading underscore", "_backup", "begin"},
		{"a trailing dash", "backup-", "end"},
		{"a trailing underscore", "backup_", "end"},
		{"a trailing dot", "backup.", "end"},
		{"an IP address", "10.1.2.3", "IP address"},
		{"the goog prefix", "goog-backup", `"goog"`},
		{"google inside", "backup-google-eu", `"google"`},
		{"a misspelling of google with zeros", "backup-g00gle", `"google"`},
		{"a misspelling of google with a one", "backup-goog1e", `"google"`},
	} {
		cases = append(cases, badinput.Case{Name: "bucket name: " + n.name, Data: good, Run: asKey(reconcileBucket(n.bucket, region)),
			Want: objectstore.ErrInvalidConfig, Names: []string{fmt.Sprintf("%q", n.bucket), n.rule, "BackupBucket's name"}})
	}
	for _, bucket := range []string{"Backup-Bucket", "10.1.2.3", "backup..bucket", "goog-backup"} {
		cases = append(cases, badinput.Case{Name: "entry deletion: spec.bucketName " + bucket, Data: good, Run: asKey(deleteEntry(bucket)),
			Want: objectstore.ErrInvalidConfig, Names: []string{bucket, "spec.bucketName"}})
		cases = append(cases, badinput.Case{Name: "bucket deletion: " + bucket, Data: good, Run: asKey(deleteBucket(bucket)),
			Want: objectstore.ErrInvalidConfig, Names: []string{bucket, "BackupBucket's name"}})
	}

	// bucketName is no secret, and an endpoint that passed validation holds no credentials (none
	// in it, no query): the SDK's request URLs show it, which says where the request went.
	// secretParts checks the refused endpoints' passwords.
	badinput.Run(t, badinput.Harness{State: bucketState, AtLeast: 30, Secrets: func(data map[string][]byte) []string {
		var values []string
		for k := range data {
			if k != "bucketName" && k != "storageAPIEndpoint" {
				values = append(values, badinput.Values(data, k)...)
			}
		}
		return append(values, secretParts(data)...)
	}}, cases)
}

// reconcileBucketWith is reconcileBucket with a providerConfig.
func reconcileBucketWith(bucket, raw string) func(*testing.T, map[string][]byte, bool) error {
	return func(t *testing.T, data map[string][]byte, wi bool) error {
		cfg, err := testProvider.Decode([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		store, err := storesWith(data, wi, region, cfg)
		if err != nil {
			return err
		}
		return store.EnsureBucket(context.Background(), objectstore.Bucket{Name: bucket, Region: region})
	}
}

// A declaration the bucket cannot honour any more (a locked retention policy cannot be shortened
// or unlocked): refused naming the field path and the bucket, and the bucket is not written to.
func TestLockedPolicyTheDeclarationCannotHonour(t *testing.T) {
	good := gcs.SecretData()
	name := newBucketName()
	locked := providerConfigHead + "immutability:\n  retentionType: bucket\n  retentionPeriod: 48h\n  locked: true\n"
	if err := reconcileBucketWith(name, locked)(t, good, false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, raw, path string }{
		{"shorter period", providerConfigHead + "immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  locked: true\n", "providerConfig.immutability.retentionPeriod"},
		{"unlocked", providerConfigHead + "immutability:\n  retentionType: bucket\n  retentionPeriod: 48h\n", "providerConfig.immutability.locked"},
		{"no immutability", providerConfigHead, "providerConfig.immutability"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := bucketState(t)
			err := reconcileBucketWith(name, c.raw)(t, good, false)
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), name) {
				t.Fatalf("got %v; want ErrInvalidConfig naming %q and %q", err, c.path, name)
			}
			if after := bucketState(t); !slices.Equal(before, after) {
				t.Fatalf("the store's buckets changed: before %v, after %v", before, after)
			}
		})
	}
}

// Every store operation checks the bucket name before it sends anything: the front records no
// request naming the bucket.
func TestBadBucketNamesSendNothing(t *testing.T) {
	ctx := context.Background()
	store := newStore(t, gcs.SecretData())
	const bad = "Geb-Bad-Name"
	ops := map[string]func() error{
		"EnsureBucket": func() error { return store.EnsureBucket(ctx, objectstore.Bucket{Name: bad, Region: region}) },
		"PutObject":    func() error { return store.PutObject(ctx, bad, "k", []byte("v")) },
		"OpenObject":   func() error { _, err := store.OpenObject(ctx, bad, "k", ""); return err },
		"ListObjects": func() error {
			return store.ListObjects(ctx, bad, "", func([]objectstore.ObjectVersion) error { return nil })
		},
		"DeleteObjects": func() error {
			_, err := store.DeleteObjects(ctx, bad, []objectstore.ObjectVersion{{Key: "k"}})
			return err
		},
		"DeferDeletion": func() error { _, err := store.DeferDeletion(ctx, bad, "shoot--a--b/"); return err },
		"DeleteBucket":  func() error { return store.DeleteBucket(ctx, bad) },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			err := op()
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), `"`+bad+`"`) || !strings.Contains(err.Error(), "spec.bucketName") {
				t.Fatalf("got %v; want ErrInvalidConfig naming %q and spec.bucketName", err, bad)
			}
		})
	}
	if reqs := gcs.Requests(bad); len(reqs) > 0 {
		t.Fatalf("requests naming %q were sent: %v", bad, reqs)
	}
}

// An entry whose bucket does not exist: the store says so with the bucket's name, and the deletion
// engine takes it as nothing left to delete (objectstore.DeletePrefix); nothing is created.
func TestEntryDeletionInAMissingBucket(t *testing.T) {
	ctx := context.Background()
	store, name := newStore(t, gcs.SecretData()), newBucketName()
	before := bucketState(t)
	err := store.ListObjects(ctx, name, "shoot--garden--x/", func([]objectstore.ObjectVersion) error { return nil })
	if !errors.Is(err, objectstore.ErrBucketNotFound) || !strings.Contains(err.Error(), name) {
		t.Fatalf("got %v; want ErrBucketNotFound naming %q", err, name)
	}
	if err := deleteEntry(name)(t, gcs.SecretData(), false); err != nil {
		t.Fatalf("got %v; a missing bucket leaves nothing to delete", err)
	}
	if after := bucketState(t); !slices.Equal(before, after) {
		t.Fatalf("the store's buckets changed: before %v, after %v", before, after)
	}
}

// bucketState lists every bucket through the front, each with its metageneration (which every
// change of its settings raises).
func bucketState(t *testing.T) []string {
	t.Helper()
	client, _, err := testProvider.NewClient(context.Background(), provider.Credentials{Data: gcs.SecretData()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var out []string
	it := client.Buckets(context.Background(), gcs.ProjectID)
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s@%d", a.Name, a.MetaGeneration))
	}
	slices.Sort(out)
	return out
}

// secretParts are the pieces of a key file's private key, and the password of an endpoint, that
// must never appear in a message.
func secretParts(data map[string][]byte) []string {
	var parts []string
	var key struct {
		PrivateKey string `json:"private_key"`
	}
	if json.Unmarshal(data["serviceaccount.json"], &key) == nil {
		for _, line := range strings.Split(key.PrivateKey, "\n") {
			if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
				parts = append(parts, line[:16])
			}
		}
	}
	if strings.Contains(string(data["storageAPIEndpoint"]), "endpoint-password") {
		parts = append(parts, "endpoint-password")
	}
	if strings.Contains(string(data["storageAPIEndpoint"]), "api-key-value") {
		parts = append(parts, "api-key-value")
	}
	return parts
}

func revokedEmail(t *testing.T, data map[string][]byte) string {
	t.Helper()
	var key struct {
		ClientEmail string `json:"client_email"`
	}
	if err := json.Unmarshal(data["serviceaccount.json"], &key); err != nil {
		t.Fatal(err)
	}
	return key.ClientEmail
}

func manyLabels(n int) string {
	var b strings.Builder
	b.WriteString("labels:\n")
	for i := range n {
		fmt.Fprintf(&b, "  l%d: v\n", i)
	}
	return b.String()
}
