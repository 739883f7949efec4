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

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// badInput is one wrong input: what the extension does with it (decode a providerConfig, build a
// store and reconcile a bucket, delete an entry's prefix or a bucket, write etcd-backup), the
// sentinel it must answer with (which pkg/controller maps to a Gardener error code), and what the
// message must name. Every case also checks that no secret value is in the message and that the
// store holds the same buckets, unchanged, before and after.
type badInput struct {
	name  string
	data  map[string][]byte // the secret involved, if any: none of its values may appear
	wi    bool              // the secret is a workload identity secret
	run   func(t *testing.T, data map[string][]byte, wi bool) error
	want  error
	names []string // substrings the message must contain: field path, secret key, rule, locations
}

const providerConfigHead = "apiVersion: gcp.backup.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"

func providerConfigCase(name, raw string, names ...string) badInput {
	return badInput{name: "providerConfig: " + name, want: objectstore.ErrInvalidConfig, names: names,
		run: func(t *testing.T, _ map[string][]byte, _ bool) error {
			_, err := gcpapi.API.DecodeBucketConfig([]byte(raw))
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
		prefix, err := objectstore.EntryPrefix("shoot--garden--bad-input")
		if err != nil {
			return err
		}
		_, err = objectstore.DeletePrefix(context.Background(), store, bucket, prefix, objectstore.DeleteOptions{})
		return err
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

func withRaw(data map[string][]byte, key, value string) map[string][]byte {
	out := maps.Clone(data)
	out[key] = []byte(value)
	return out
}

func without(data map[string][]byte, key string) map[string][]byte {
	out := maps.Clone(data)
	delete(out, key)
	return out
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
	etcd := withRaw(good, "bucketName", "geb-bad-input")
	etcdWI := map[string][]byte{"config": sidecarWorkloadIdentityConfig(gcs.ProjectID, nil), "bucketName": []byte("geb-bad-input")}
	revoked := gcs.SecretData()
	gcs.RevokeServiceAccountKey(revokedEmail(t, revoked))
	fresh := newBucketName // a name that is valid and not taken
	const sa = `"serviceaccount.json"`

	// The rows every provider shares (apiVersion, kind, strict decoding, backupFreshness, bucket
	// names no store takes) are pkg/provider/all's TestSharedBadInput, run on every registered API.
	cases := []badInput{
		// providerConfig: strict decoding, every error with its field path.
		providerConfigCase("unknown field", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  mode: compliance\n", "providerConfig", "immutability.mode"),
		providerConfigCase("unknown top-level field", providerConfigHead+"versioning: true\n", "providerConfig", "versioning"),
		providerConfigCase("wrong apiVersion", "apiVersion: gcp.provider.extensions.gardener.cloud/v1beta1\nkind: BackupBucketConfig\n", "providerConfig.apiVersion"),
		providerConfigCase("object given as a boolean", providerConfigHead+"immutability: yes\n", "providerConfig.immutability"),
		providerConfigCase("map given as a list", providerConfigHead+"labels: [team]\n", "providerConfig.labels"),
		providerConfigCase("boolean given as a string", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  locked: maybe\n", "providerConfig.immutability.locked"),
		providerConfigCase("string given as a number", providerConfigHead+"immutability:\n  retentionType: 3\n  retentionPeriod: 24h\n", "providerConfig.immutability.retentionType"),
		providerConfigCase("boolean given as a string, in an inlined field", providerConfigHead+"generatedCredentials:\n  allowPassThrough: maybe\n", "providerConfig.generatedCredentials.allowPassThrough"),
		providerConfigCase("duration given as a number", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24\n", "providerConfig.immutability.retentionPeriod"),
		providerConfigCase("unparseable duration", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: forever\n", "providerConfig.immutability.retentionPeriod"),
		providerConfigCase("negative retention period", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: -48h\n", "providerConfig.immutability.retentionPeriod"),
		providerConfigCase("retention period not whole seconds", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h0.5s\n", "providerConfig.immutability.retentionPeriod"),
		providerConfigCase("retention period beyond GCS's 100 years", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 876600h1s\n", "providerConfig.immutability.retentionPeriod"),
		providerConfigCase("negative soft delete", providerConfigHead+"softDelete:\n  retentionDuration: -168h\n", "providerConfig.softDelete.retentionDuration"),
		providerConfigCase("soft delete not whole days", providerConfigHead+"softDelete:\n  retentionDuration: 180h\n", "providerConfig.softDelete.retentionDuration"),
		providerConfigCase("soft delete shorter than GCS's 7 days", providerConfigHead+"softDelete:\n  retentionDuration: 72h\n", "providerConfig.softDelete.retentionDuration"),
		providerConfigCase("soft delete longer than GCS's 90 days", providerConfigHead+"softDelete:\n  retentionDuration: 2184h\n", "providerConfig.softDelete.retentionDuration"),
		providerConfigCase("unknown retention type", providerConfigHead+"immutability:\n  retentionType: object\n  retentionPeriod: 24h\n", "providerConfig.immutability.retentionType"),
		providerConfigCase("upper-case label key", providerConfigHead+"labels:\n  Team: a\n", "providerConfig.labels[Team]"),
		providerConfigCase("label value with a dot", providerConfigHead+"labels:\n  team: a.b\n", "providerConfig.labels[team]"),
		providerConfigCase("the extension's own label", providerConfigHead+"labels:\n  managed-by: me\n", "providerConfig.labels[managed-by]"),
		providerConfigCase("more labels than GCS allows besides the extension's", providerConfigHead+manyLabels(64), "providerConfig.labels"),
		providerConfigCase("unparseable rotation period", providerConfigHead+"generatedCredentials:\n  rotation:\n    period: monthly\n", "providerConfig.generatedCredentials.rotation.period"),
		providerConfigCase("grace period not shorter than the rotation period", providerConfigHead+"generatedCredentials:\n  rotation:\n    period: 24h\n    gracePeriod: 25h\n", "providerConfig.generatedCredentials.rotation.gracePeriod"),

		// Secrets: on bucket reconcile.
		{name: "secret: no serviceaccount.json", data: without(good, "serviceaccount.json"), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa}},
		{name: "secret: empty serviceaccount.json", data: withRaw(good, "serviceaccount.json", ""), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa}},
		{name: "secret: serviceaccount.json not JSON", data: withRaw(good, "serviceaccount.json", "private-key-not-json-at-all"), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa, "not a service-account key file"}},
		{name: "secret: serviceaccount.json a JSON list", data: withRaw(good, "serviceaccount.json", `["a-json-list-of-things"]`), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa}},
		{name: "secret: serviceaccount.json with a number for type", data: withRaw(good, "serviceaccount.json", keyFile(t, good, map[string]any{"type": 7})), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa, `"type"`}},
		{name: "secret: serviceaccount.json an external account", data: withRaw(good, "serviceaccount.json", keyFile(t, good, map[string]any{"type": "external_account"})), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa, `"external_account"`}},
		{name: "secret: serviceaccount.json a user's credentials", data: withRaw(good, "serviceaccount.json", keyFile(t, good, map[string]any{"type": "authorized_user"})), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa, `"authorized_user"`}},
		{name: "secret: serviceaccount.json without project_id", data: withRaw(good, "serviceaccount.json", keyFile(t, good, map[string]any{"project_id": nil})), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa, "project_id"}},
		{name: "secret: serviceaccount.json without client_email", data: withRaw(good, "serviceaccount.json", keyFile(t, good, map[string]any{"client_email": nil})), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa, "client_email"}},
		{name: "secret: serviceaccount.json without private_key", data: withRaw(good, "serviceaccount.json", keyFile(t, good, map[string]any{"private_key": nil})), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa, "private_key"}},
		{name: "secret: private_key not PEM", data: withRaw(good, "serviceaccount.json", keyFile(t, good, map[string]any{"private_key": "secret-material-not-pem"})), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa, "private_key", "PEM"}},
		{name: "secret: private_key a PEM block without a key", data: withRaw(good, "serviceaccount.json", keyFile(t, good, map[string]any{"private_key": "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LW1hdGVyaWFsLW5vdC1hLWtleQ==\n-----END PRIVATE KEY-----\n"})), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa, "private_key"}},
		{name: "secret: a key the token endpoint refuses", data: revoked, run: reconcileBucket(fresh(), region), want: objectstore.ErrUnauthenticated, names: []string{sa, "refused"}},
		{name: "secret: storageAPIEndpoint not absolute", data: withRaw(good, "storageAPIEndpoint", "storage.googleapis.com/storage/v1/"), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{`"storageAPIEndpoint"`}},
		{name: "secret: storageAPIEndpoint with an unclosed IPv6 bracket", data: withRaw(good, "storageAPIEndpoint", "http://[::1"), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{`"storageAPIEndpoint"`}},
		{name: "secret: storageAPIEndpoint with an ftp scheme", data: withRaw(good, "storageAPIEndpoint", "ftp://storage.googleapis.com/"), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{`"storageAPIEndpoint"`, "https"}},
		{name: "secret: storageAPIEndpoint plain http off loopback", data: withRaw(good, "storageAPIEndpoint", "http://storage.googleapis.com/storage/v1/"), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{`"storageAPIEndpoint"`, "loopback"}},
		{name: "secret: storageAPIEndpoint with credentials in it", data: withRaw(good, "storageAPIEndpoint", "https://user:endpoint-password@storage.googleapis.com/"), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{`"storageAPIEndpoint"`, "credentials"}},
		{name: "secret: storageAPIEndpoint with a query", data: withRaw(good, "storageAPIEndpoint", "https://storage.googleapis.com/storage/v1/?key=api-key-value"), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{`"storageAPIEndpoint"`}},
		{name: "secret: storageAPIEndpoint with another path", data: withRaw(good, "storageAPIEndpoint", "https://storage.googleapis.com/upload/storage/v1/"), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{`"storageAPIEndpoint"`, "path"}},
		{name: "secret: storageAPIEndpoint with a trailing newline", data: withRaw(good, "storageAPIEndpoint", string(good["storageAPIEndpoint"])+"\n"), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{`"storageAPIEndpoint"`, "newline"}},

		// Secrets: credential modes the provider cannot use.
		{name: "secret: workload identity with a service-account key too", data: withRaw(wi, "serviceaccount.json", string(good["serviceaccount.json"])), wi: true, run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{sa, `"config"`, `"token"`}},
		{name: "secret: service-account key with a workload identity config", data: withRaw(good, "config", string(wi["config"])), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{`"config"`, "not a workload identity secret"}},
		{name: "secret: service-account key with a token", data: withRaw(good, "token", "stray-token-value"), run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{`"token"`, "not a workload identity secret"}},

		// Workload identity configuration.
		{name: "workload identity: no config", data: without(wi, "config"), wi: true, run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{`"config"`}},
		{name: "workload identity: config not YAML", data: withRaw(wi, "config", "{{{"), wi: true, run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{"config"}},
		{name: "workload identity: config of another kind", data: withRaw(wi, "config", "apiVersion: gcp.provider.extensions.gardener.cloud/v1alpha1\nkind: BackupBucketConfig\n"), wi: true, run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{"config.kind"}},
		{name: "workload identity: no projectID", data: withRaw(wi, "config", string(sidecarWorkloadIdentityConfig("", nil))), wi: true, run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{"config.projectID"}},
		{name: "workload identity: credentialsConfig a service account", data: withRaw(wi, "config", string(sidecarWorkloadIdentityConfig(gcs.ProjectID, map[string]string{"type": "service_account"}))), wi: true, run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{"config.credentialsConfig.type"}},
		{name: "workload identity: credentialsConfig without token_url", data: withRaw(wi, "config", string(sidecarWorkloadIdentityConfig(gcs.ProjectID, map[string]string{"token_url": ""}))), wi: true, run: reconcileBucket(fresh(), region), want: objectstore.ErrInvalidConfig, names: []string{"config.credentialsConfig.token_url"}},
		{name: "workload identity: no token yet", data: without(wi, "token"), wi: true, run: reconcileBucket(fresh(), region), want: objectstore.ErrUnauthenticated, names: []string{`"token"`}},
		{name: "workload identity: a token the STS refuses", data: withRaw(wi, "token", "unknown-subject-token"), wi: true, run: reconcileBucket(fresh(), region), want: objectstore.ErrUnauthenticated, names: []string{`"token"`, "refused"}},

		// Locations.
		{name: "location: existing bucket in another location than spec.region", data: good, run: reconcileBucket(elsewhere, region), want: objectstore.ErrInvalidConfig, names: []string{elsewhere, `"US-EAST1"`, `"` + region + `"`, "spec.region"}},
		{name: "location: spec.region with an underscore", data: good, run: reconcileBucket(fresh(), "europe_west1"), want: objectstore.ErrInvalidConfig, names: []string{"spec.region", "europe_west1"}},
		{name: "location: spec.region with a trailing newline", data: good, run: reconcileBucket(fresh(), region+"\n"), want: objectstore.ErrInvalidConfig, names: []string{"spec.region"}},
		{name: "location: no spec.region", data: good, run: reconcileBucket(fresh(), ""), want: objectstore.ErrInvalidConfig, names: []string{"spec.region"}},
		{name: "ownership: a name another project holds", data: good, run: reconcileBucket("foreign-"+fresh(), region), want: objectstore.ErrOwnedByOther, names: []string{"foreign-", "another project"}},

		// Entry and bucket deletion.
		{name: "entry deletion: malformed storageAPIEndpoint", data: withRaw(good, "storageAPIEndpoint", "ftp://x"), run: deleteEntry(elsewhere), want: objectstore.ErrInvalidConfig, names: []string{`"storageAPIEndpoint"`}},
		{name: "entry deletion: serviceaccount.json not JSON", data: withRaw(good, "serviceaccount.json", "private-key-not-json-at-all"), run: deleteEntry(elsewhere), want: objectstore.ErrInvalidConfig, names: []string{sa}},
		{name: "entry deletion: a key the token endpoint refuses", data: revoked, run: deleteEntry(elsewhere), want: objectstore.ErrUnauthenticated, names: []string{sa, elsewhere}},
		{name: "entry deletion: workload identity without a token", data: without(wi, "token"), wi: true, run: deleteEntry(elsewhere), want: objectstore.ErrUnauthenticated, names: []string{`"token"`}},
		{name: "bucket deletion: a key the token endpoint refuses", data: revoked, run: deleteBucket(elsewhere), want: objectstore.ErrUnauthenticated, names: []string{sa}},
		{name: "bucket deletion: serviceaccount.json without private_key", data: withRaw(good, "serviceaccount.json", keyFile(t, good, map[string]any{"private_key": nil})), run: deleteBucket(elsewhere), want: objectstore.ErrInvalidConfig, names: []string{sa, "private_key"}},

		// etcd-backup: what etcd-backup-restore v0.43.0 could not use is refused, naming the key.
		{name: "etcd-backup: no serviceaccount.json", data: without(etcd, "serviceaccount.json"), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{sa}},
		{name: "etcd-backup: serviceaccount.json an external account", data: withRaw(etcd, "serviceaccount.json", keyFile(t, etcd, map[string]any{"type": "external_account"})), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{sa}},
		{name: "etcd-backup: project_id the sidecar refuses", data: withRaw(etcd, "serviceaccount.json", keyFile(t, etcd, map[string]any{"project_id": "My_Project"})), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{sa, "project_id", "My_Project"}},
		{name: "etcd-backup: a key file field the sidecar refuses", data: withRaw(etcd, "serviceaccount.json", keyFile(t, etcd, map[string]any{"quota_project_id": "other-project"})), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{sa, `"quota_project_id"`}},
		{name: "etcd-backup: storageAPIEndpoint with a trailing newline", data: withRaw(etcd, "storageAPIEndpoint", "https://storage.googleapis.com/storage/v1/\n"), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{`"storageAPIEndpoint"`}},
		{name: "etcd-backup: storageAPIEndpoint with an ftp scheme", data: withRaw(etcd, "storageAPIEndpoint", "ftp://x"), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{`"storageAPIEndpoint"`}},
		{name: "etcd-backup: both a key and a workload identity", data: withRaw(etcd, "config", string(etcdWI["config"])), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{sa, `"config"`}},
		{name: "etcd-backup: bucketName breaking GCS's rules", data: withRaw(etcd, "bucketName", "Geb-Bad-Input"), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{`"bucketName"`, "Geb-Bad-Input", "lowercase"}},
		{name: "etcd-backup: workload identity config not decodable", data: withRaw(etcdWI, "config", "{{{"), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{"config"}},
		{name: "etcd-backup: workload identity token_url not Google's STS", data: withRaw(etcdWI, "config", string(gcs.WorkloadIdentityConfig("etcd-subject-token"))), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{`"config"`, "config.credentialsConfig.token_url", "https://sts.googleapis.com/v1/token"}},
		{name: "etcd-backup: workload identity subject_token_type not a JWT", data: withRaw(etcdWI, "config", string(sidecarWorkloadIdentityConfig(gcs.ProjectID, map[string]string{"subject_token_type": "urn:ietf:params:oauth:token-type:saml2"}))), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{"config.credentialsConfig.subject_token_type"}},
		{name: "etcd-backup: workload identity impersonation URL the sidecar refuses", data: withRaw(etcdWI, "config", string(sidecarWorkloadIdentityConfig(gcs.ProjectID, map[string]string{"service_account_impersonation_url": "https://example.com/impersonate"}))), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{"config.credentialsConfig.service_account_impersonation_url"}},
		{name: "etcd-backup: workload identity projectID the sidecar refuses", data: withRaw(etcdWI, "config", string(sidecarWorkloadIdentityConfig("p1", nil))), run: writeEtcdBackup, want: objectstore.ErrInvalidConfig, names: []string{"config.projectID", `"p1"`}},
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
		cases = append(cases, badInput{name: "bucket name: " + n.name, data: good, run: reconcileBucket(n.bucket, region),
			want: objectstore.ErrInvalidConfig, names: []string{fmt.Sprintf("%q", n.bucket), n.rule, "BackupBucket's name"}})
	}
	for _, bucket := range []string{"Backup-Bucket", "10.1.2.3", "backup..bucket", "goog-backup"} {
		cases = append(cases, badInput{name: "entry deletion: spec.bucketName " + bucket, data: good, run: deleteEntry(bucket),
			want: objectstore.ErrInvalidConfig, names: []string{bucket, "spec.bucketName"}})
		cases = append(cases, badInput{name: "bucket deletion: " + bucket, data: good, run: deleteBucket(bucket),
			want: objectstore.ErrInvalidConfig, names: []string{bucket, "BackupBucket's name"}})
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := bucketState(t)
			err := c.run(t, c.data, c.wi)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v; want %v", err, c.want)
			}
			t.Log(err)
			for _, n := range c.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("the message does not name %q: %v", n, err)
				}
			}
			// bucketName is no secret, and an endpoint that passed validation holds no
			// credentials (none in it, no query): the SDK's request URLs show it, which says
			// where the request went. secretParts checks the refused endpoints' passwords.
			for k, v := range c.data {
				if k != "bucketName" && k != "storageAPIEndpoint" && len(v) > 3 && strings.Contains(err.Error(), string(v)) {
					t.Errorf("the message reveals the value of the secret key %q: %v", k, err)
				}
			}
			for _, s := range secretParts(c.data) {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the message reveals a secret %q: %v", s, err)
				}
			}
			if after := bucketState(t); !slices.Equal(before, after) {
				t.Errorf("the store's buckets changed: before %v, after %v", before, after)
			}
		})
	}
	if len(cases) < 30 {
		t.Fatalf("only %d wrong inputs", len(cases))
	}
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
