// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/badinput"
)

// The wrong inputs of S3 and MinIO: the harness (test/badinput) checks that each is refused with
// its sentinel, naming its cause, showing no secret value, and that MinIO holds the same buckets
// before and after.

var providerConfigHead = badinput.Head(awsapi.Type)

// reconcileBucket does what the BackupBucket actuator does: a store from the secret, then
// EnsureBucket with the bucket's name and spec.region.
func reconcileBucket(bucket, specRegion string) func(*testing.T, map[string][]byte) error {
	return func(_ *testing.T, data map[string][]byte) error {
		mgmt, err := (&awsprovider.Provider{}).NewManagement(context.Background(), provider.Credentials{Data: data, Region: specRegion}, &awsapi.BackupBucketConfig{})
		if err != nil {
			return err
		}
		return mgmt.EnsureBucket(context.Background(), objectstore.Bucket{Name: bucket, Region: specRegion})
	}
}

// deleteEntry does what the BackupEntry delegate does on deletion: a store from the secret, then
// the deletion engine on the entry's prefix in spec.bucketName.
func deleteEntry(bucket, specRegion string) func(*testing.T, map[string][]byte) error {
	return func(_ *testing.T, data map[string][]byte) error {
		store, err := (&awsprovider.Provider{}).NewDataPlane(context.Background(), provider.Credentials{Data: data, Region: specRegion})
		if err != nil {
			return err
		}
		return badinput.DeleteEntry(store, bucket)
	}
}

func writeEtcdBackup(_ *testing.T, data map[string][]byte) error {
	be := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{Region: "eu-central-1", BucketName: "geb-bad-input"}}
	_, err := (&awsprovider.Provider{}).EtcdBackupSecretData(be, data)
	return err
}

func TestBadInputIsRefusedNamingItsCauseAndTouchesNothing(t *testing.T) {
	ctx := context.Background()
	raw := minio.S3Client()
	// A bucket that exists in MinIO's region (eu-central-1), for the region cases.
	existing := newBucketName()
	if _, err := raw.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &existing}); err != nil {
		t.Fatal(err)
	}
	good := minio.SecretData()
	etcd := maps.Clone(good)
	etcd["bucketName"] = []byte("geb-bad-input")
	fresh := newBucketName // a name that is valid and not taken

	// The rows every provider shares (apiVersion, kind, strict decoding, backupFreshness, bucket
	// names no store takes) are badinput.Shared, run on every registered API by pkg/provider/all.
	cases := []badinput.Case{
		// providerConfig: strict decoding, every error with its field path.
		badinput.Config(awsapi.API, "unknown field", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  mode: governance\n  extra: 1\n", "providerConfig", "immutability.extra"),
		badinput.Config(awsapi.API, "unknown top-level field", providerConfigHead+"versioning: true\n", "providerConfig", "versioning"),
		badinput.Config(awsapi.API, "wrong apiVersion", "apiVersion: aws.provider.extensions.gardener.cloud/v1beta1\nkind: BackupBucketConfig\n", "providerConfig.apiVersion"),
		badinput.Config(awsapi.API, "object given as a boolean", providerConfigHead+"immutability: yes\n", "providerConfig.immutability", "must be an object"),
		badinput.Config(awsapi.API, "list given as a string", providerConfigHead+"disabledSettings: DefaultEncryption\n", "providerConfig.disabledSettings", "must be a list"),
		badinput.Config(awsapi.API, "boolean given as a string, in an inlined field", providerConfigHead+"generatedCredentials:\n  issuer: MinIO\n  allowPassThrough: maybe\n", "providerConfig.generatedCredentials.allowPassThrough", "must be true or false"),
		badinput.Config(awsapi.API, "string given as a number", providerConfigHead+"encryption:\n  type: 3\n", "providerConfig.encryption.type", "must be a string"),
		badinput.Config(awsapi.API, "duration given as a number", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24\n  mode: governance\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(awsapi.API, "unparseable duration", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: forever\n  mode: governance\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(awsapi.API, "negative duration", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: -48h\n  mode: governance\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(awsapi.API, "duration not whole days", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 30h\n  mode: governance\n", "providerConfig.immutability.retentionPeriod"),
		badinput.Config(awsapi.API, "unknown retention type", providerConfigHead+"immutability:\n  retentionType: object\n  retentionPeriod: 24h\n  mode: governance\n", "providerConfig.immutability.retentionType"),
		badinput.Config(awsapi.API, "unknown mode", providerConfigHead+"immutability:\n  retentionType: bucket\n  retentionPeriod: 24h\n  mode: legal\n", "providerConfig.immutability.mode"),
		badinput.Config(awsapi.API, "unknown encryption type", providerConfigHead+"encryption:\n  type: SSE-C\n", "providerConfig.encryption.type"),
		badinput.Config(awsapi.API, "unknown disabled setting", providerConfigHead+"disabledSettings: [ObjectLock]\n", "providerConfig.disabledSettings[0]"),
		badinput.Config(awsapi.API, "unknown issuer", providerConfigHead+"generatedCredentials:\n  issuer: STS\n", "providerConfig.generatedCredentials.issuer"),
		badinput.Config(awsapi.API, "unparseable rotation period", providerConfigHead+"generatedCredentials:\n  issuer: MinIO\n  rotation:\n    period: monthly\n", "providerConfig.generatedCredentials.rotation.period"),
		badinput.Config(awsapi.API, "unparseable grace period", providerConfigHead+"generatedCredentials:\n  issuer: MinIO\n  rotation:\n    gracePeriod: a week\n", "providerConfig.generatedCredentials.rotation.gracePeriod"),

		// Secrets: on bucket reconcile.
		{Name: "secret: no accessKeyID", Data: badinput.Without(good, "accessKeyID"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"accessKeyID"`}},
		{Name: "secret: empty secretAccessKey", Data: badinput.With(good, "secretAccessKey", ""), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"secretAccessKey"`}},
		{Name: "secret: unknown access key", Data: badinput.With(badinput.With(good, "accessKeyID", "AKIAUNKNOWNKEY0000"), "secretAccessKey", "wrong-secret-value-1"), Run: reconcileBucket(fresh(), "eu-central-1"),
			Want: objectstore.ErrUnauthenticated, Names: []string{`"accessKeyID"`, `"secretAccessKey"`}},
		{Name: "secret: wrong secretAccessKey", Data: badinput.With(good, "secretAccessKey", "wrong-secret-value-2"), Run: reconcileBucket(fresh(), "eu-central-1"),
			Want: objectstore.ErrUnauthenticated, Names: []string{`"accessKeyID"`, `"secretAccessKey"`}},
		{Name: "secret: endpoint with an unclosed IPv6 bracket", Data: badinput.With(good, "endpoint", "http://[::1"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"endpoint"`}},
		{Name: "secret: endpoint without a scheme", Data: badinput.With(good, "endpoint", "127.0.0.1:9000"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"endpoint"`}},
		{Name: "secret: endpoint host:port without a scheme", Data: badinput.With(good, "endpoint", "minio.example.com:9000"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"endpoint"`}},
		{Name: "secret: endpoint with an ftp scheme", Data: badinput.With(good, "endpoint", "ftp://x"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"endpoint"`}},
		{Name: "secret: endpoint without a host", Data: badinput.With(good, "endpoint", "https://"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"endpoint"`}},
		{Name: "secret: endpoint with credentials in it", Data: badinput.With(good, "endpoint", "http://user:endpoint-password@"+strings.TrimPrefix(minio.Endpoint, "http://")), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"endpoint"`}},
		{Name: "secret: endpoint with a trailing newline", Data: badinput.With(good, "endpoint", minio.Endpoint+"\n"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"endpoint"`}},
		{Name: "secret: s3ForcePathStyle not a boolean", Data: badinput.With(good, "s3ForcePathStyle", "yes-please"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"s3ForcePathStyle"`}},
		{Name: "secret: insecureSkipVerify not a boolean", Data: badinput.With(good, "insecureSkipVerify", "maybe"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"insecureSkipVerify"`}},
		{Name: "secret: trustedCaCert not PEM", Data: badinput.With(good, "trustedCaCert", "not-a-certificate-at-all"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"trustedCaCert"`}},
		{Name: "secret: trustedCaCert a PEM block that is no certificate", Data: badinput.With(good, "trustedCaCert", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"trustedCaCert"`}},
		{Name: "secret: trustedCaCert empty", Data: badinput.With(good, "trustedCaCert", ""), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"trustedCaCert"`}},
		{Name: "secret: region with a trailing newline", Data: badinput.With(good, "region", "eu-central-1\n"), Run: reconcileBucket(fresh(), "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`secret key "region"`, "control characters"}},
		{Name: "spec.region with an underscore", Data: badinput.Without(good, "region"), Run: reconcileBucket(fresh(), "eu_central_1"), Want: objectstore.ErrInvalidConfig, Names: []string{"spec.region", "eu_central_1"}},
		{Name: "etcd-backup: region with a trailing newline", Data: badinput.With(etcd, "region", "eu-central-1\n"), Run: writeEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`secret key "region"`}},
		{Name: "secret: no region and no spec.region", Data: badinput.Without(good, "region"), Run: reconcileBucket(fresh(), ""), Want: objectstore.ErrInvalidConfig, Names: []string{`"region"`, "spec.region"}},

		// Secrets: on entry deletion.
		{Name: "entry deletion: malformed endpoint", Data: badinput.With(good, "endpoint", "http://[::1"), Run: deleteEntry(existing, "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"endpoint"`}},
		{Name: "entry deletion: endpoint without a scheme", Data: badinput.With(good, "endpoint", "127.0.0.1:9000"), Run: deleteEntry(existing, "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{`"endpoint"`}},
		{Name: "entry deletion: wrong secretAccessKey", Data: badinput.With(good, "secretAccessKey", "wrong-secret-value-3"), Run: deleteEntry(existing, "eu-central-1"), Want: objectstore.ErrUnauthenticated, Names: []string{`"secretAccessKey"`, existing}},

		// etcd-backup: what etcd-backup-restore v0.43.0 could not use is refused.
		{Name: "etcd-backup: malformed endpoint", Data: badinput.With(etcd, "endpoint", "http://[::1"), Run: writeEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"endpoint"`}},
		{Name: "etcd-backup: endpoint without a scheme", Data: badinput.With(etcd, "endpoint", "127.0.0.1:9000"), Run: writeEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"endpoint"`}},
		{Name: "etcd-backup: s3ForcePathStyle not a boolean", Data: badinput.With(etcd, "s3ForcePathStyle", "yes-please"), Run: writeEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"s3ForcePathStyle"`}},
		{Name: "etcd-backup: s3ForcePathStyle with a newline", Data: badinput.With(etcd, "s3ForcePathStyle", "true\n"), Run: writeEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"s3ForcePathStyle"`}},
		{Name: "etcd-backup: insecureSkipVerify not a boolean", Data: badinput.With(etcd, "insecureSkipVerify", "maybe"), Run: writeEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"insecureSkipVerify"`}},
		{Name: "etcd-backup: trustedCaCert not PEM", Data: badinput.With(etcd, "trustedCaCert", "not-a-certificate-at-all"), Run: writeEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"trustedCaCert"`}},
		{Name: "etcd-backup: trustedCaCert empty", Data: badinput.With(etcd, "trustedCaCert", ""), Run: writeEtcdBackup, Want: objectstore.ErrInvalidConfig, Names: []string{`"trustedCaCert"`}},

		// Regions: MinIO runs in eu-central-1 and answers a request signed for another region
		// with 400 and X-Amz-Bucket-Region, as S3 does (S3 also answers 301).
		{Name: "region: new bucket, spec.region differs from the store's", Data: badinput.Without(good, "region"), Run: reconcileBucket(fresh(), "us-west-2"), Want: objectstore.ErrInvalidConfig, Names: []string{`"eu-central-1"`, `"us-west-2"`, "spec.region"}},
		{Name: "region: existing bucket, spec.region differs", Data: badinput.Without(good, "region"), Run: reconcileBucket(existing, "us-west-2"), Want: objectstore.ErrInvalidConfig, Names: []string{existing, `"eu-central-1"`, `"us-west-2"`, "spec.region"}},
		{Name: "region: existing bucket, the secret's region differs", Data: badinput.With(good, "region", "ap-south-1"), Run: reconcileBucket(existing, "eu-central-1"), Want: objectstore.ErrInvalidConfig, Names: []string{existing, `"eu-central-1"`, `"ap-south-1"`, `secret key "region"`}},
		{Name: "region: entry deletion in a bucket of another region", Data: badinput.Without(good, "region"), Run: deleteEntry(existing, "us-west-2"), Want: objectstore.ErrInvalidConfig, Names: []string{existing, `"eu-central-1"`, `"us-west-2"`}},
	}

	// Names: every S3 rule for general purpose buckets, checked before any request.
	for _, n := range []struct{ name, bucket, rule string }{
		{"longer than 63 characters", strings.Repeat("a", 64), "63"},
		{"shorter than 3 characters", "ab", "3"},
		{"an IP address", "10.1.2.3", "IP address"},
		{"uppercase", "Backup-Bucket", "lowercase"},
		{"an underscore", "backup_bucket", "lowercase"},
		{"a leading dot", ".backup", "begin"},
		{"a leading dash", "-backup", "begin"},
		{"a trailing dot", "backup.", "end"},
		{"a trailing dash", "backup-", "end"},
		{"two adjacent dots", "backup..bucket", "adjacent"},
		{"the xn-- prefix", "xn--backup", "xn--"},
		{"the sthree- prefix", "sthree-backup", "sthree-"},
		{"the amzn-s3-demo- prefix", "amzn-s3-demo-backup", "amzn-s3-demo-"},
		{"the -s3alias suffix", "backup-s3alias", "-s3alias"},
		{"the --ol-s3 suffix", "backup--ol-s3", "--ol-s3"},
		{"the .mrap suffix", "backup.mrap", ".mrap"},
		{"the --x-s3 suffix", "backup--x-s3", "--x-s3"},
		{"the --table-s3 suffix", "backup--table-s3", "--table-s3"},
	} {
		cases = append(cases, badinput.Case{Name: "bucket name: " + n.name, Data: good, Run: reconcileBucket(n.bucket, "eu-central-1"),
			Want: objectstore.ErrInvalidConfig, Names: []string{n.bucket, n.rule}})
	}
	for _, bucket := range []string{"Backup-Bucket", "10.1.2.3", "backup..bucket"} {
		cases = append(cases, badinput.Case{Name: "entry deletion: spec.bucketName " + bucket, Data: good, Run: deleteEntry(bucket, "eu-central-1"),
			Want: objectstore.ErrInvalidConfig, Names: []string{bucket, "spec.bucketName"}})
	}

	badinput.Run(t, badinput.Harness{State: bucketNames, AtLeast: 30, Secrets: func(data map[string][]byte) []string {
		return badinput.Values(data, "accessKeyID", "secretAccessKey", "endpoint", "trustedCaCert")
	}}, cases)
}

// An entry whose bucket does not exist: the store says so with the bucket's name, and the deletion
// engine takes it as nothing left to delete (objectstore.DeletePrefix); nothing is created.
func TestEntryDeletionInAMissingBucket(t *testing.T) {
	ctx := context.Background()
	store, name := newStore(t, minio.SecretData()), newBucketName()
	before := bucketNames(t)
	err := store.ListObjects(ctx, name, "shoot--garden--x/", func([]objectstore.ObjectVersion) error { return nil })
	if !errors.Is(err, objectstore.ErrBucketNotFound) || !strings.Contains(err.Error(), name) {
		t.Fatalf("got %v; want ErrBucketNotFound naming %q", err, name)
	}
	err = deleteEntry(name, "eu-central-1")(t, minio.SecretData())
	if err != nil {
		t.Fatalf("got %v; a missing bucket leaves nothing to delete", err)
	}
	if after := bucketNames(t); !slices.Equal(before, after) {
		t.Fatalf("MinIO's buckets changed: before %v, after %v", before, after)
	}
}

func bucketNames(t *testing.T) []string {
	t.Helper()
	out, err := minio.S3Client().ListBuckets(context.Background(), &s3.ListBucketsInput{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range out.Buckets {
		names = append(names, aws.ToString(b.Name))
	}
	slices.Sort(names)
	return names
}

// TestHeadAnswersWithoutACodeAreClassified uses httptest because MinIO cannot show these answers:
// MinIO never answers 301 (S3 does, for a bucket in another region), and it always sends
// X-Amz-Bucket-Region, so a 400 without a region header (as some S3-compatible stores send)
// cannot be had from it. Nothing that changes a bucket may be sent.
func TestHeadAnswersWithoutACodeAreClassified(t *testing.T) {
	cases := []struct {
		name  string
		head  func(w http.ResponseWriter)
		get   func(w http.ResponseWriter) // GET ?location, the follow-up with a body
		want  error
		names []string
	}{
		{name: "301 with the bucket's region (S3)",
			head: func(w http.ResponseWriter) {
				w.Header().Set("X-Amz-Bucket-Region", "us-east-2")
				w.WriteHeader(http.StatusMovedPermanently)
			},
			want: objectstore.ErrInvalidConfig, names: []string{`"us-east-2"`, `"eu-central-1"`, "geb-region-test"}},
		{name: "400 without a region header, the follow-up names the cause",
			head: func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadRequest) },
			get: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AuthorizationHeaderMalformed</Code><Message>the region is wrong</Message></Error>`))
			},
			want: objectstore.ErrInvalidConfig, names: []string{"AuthorizationHeaderMalformed", "geb-region-test"}},
		{name: "400 without a region header, the follow-up shows the bucket's region",
			head: func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadRequest) },
			get: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/xml")
				_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">ap-northeast-1</LocationConstraint>`))
			},
			want: objectstore.ErrInvalidConfig, names: []string{`"ap-northeast-1"`, `"eu-central-1"`, "geb-region-test"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var changes []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.Method == http.MethodHead:
					c.head(w)
				case r.Method == http.MethodGet && c.get != nil:
					c.get(w)
				default:
					mu.Lock()
					changes = append(changes, r.Method+" "+r.URL.String())
					mu.Unlock()
					w.WriteHeader(http.StatusNotImplemented)
				}
			}))
			defer srv.Close()
			data := map[string][]byte{"accessKeyID": []byte("AKIAHEADTEST"), "secretAccessKey": []byte("head-test-secret"),
				"endpoint": []byte(srv.URL), "s3ForcePathStyle": []byte("true")}
			err := reconcileBucket("geb-region-test", "eu-central-1")(t, data)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v; want %v", err, c.want)
			}
			for _, n := range c.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("the message does not name %q: %v", n, err)
				}
			}
			if strings.Contains(err.Error(), "head-test-secret") || strings.Contains(err.Error(), srv.URL) {
				t.Errorf("the message reveals a secret value: %v", err)
			}
			if len(changes) > 0 {
				t.Errorf("requests other than reads were sent: %v", changes)
			}
		})
	}
}
