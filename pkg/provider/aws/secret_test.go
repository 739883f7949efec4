package aws_test

import (
	"context"
	"encoding/pem"
	"errors"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
)

func TestEtcdBackupSecretData(t *testing.T) {
	ca := testCA(t)
	entry := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{Region: "eu-west-1"}}
	wiConfig := "apiVersion: aws.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\nroleARN: arn:aws:iam::1:role/r\n"
	cases := []struct {
		name    string
		in      map[string]string
		want    map[string]string
		wantErr bool
	}{
		{name: "static keys; stray keys dropped; region from the entry",
			in:   map[string]string{"accessKeyID": "id", "secretAccessKey": "s", "bucketName": "b", "stray.json": "{}", "other": "x"},
			want: map[string]string{"accessKeyID": "id", "secretAccessKey": "s", "bucketName": "b", "region": "eu-west-1"}},
		{name: "S3-compatible keys pass through; the secret's region wins",
			in: map[string]string{"accessKeyID": "id", "secretAccessKey": "s", "bucketName": "b", "region": "us-east-1", "endpoint": "https://s3.local",
				"s3ForcePathStyle": "true", "trustedCaCert": ca, "insecureSkipVerify": "false"},
			want: map[string]string{"accessKeyID": "id", "secretAccessKey": "s", "bucketName": "b", "region": "us-east-1", "endpoint": "https://s3.local",
				"s3ForcePathStyle": "true", "trustedCaCert": ca, "insecureSkipVerify": "false"}},
		{name: "workload identity: roleARN from the config",
			in:   map[string]string{"config": wiConfig, "bucketName": "b"},
			want: map[string]string{"roleARN": "arn:aws:iam::1:role/r", "bucketName": "b", "region": "eu-west-1"}},
		{name: "no credentials", in: map[string]string{"bucketName": "b"}, wantErr: true},
		{name: "bad workload identity config", in: map[string]string{"config": "kind: Nope\n", "bucketName": "b"}, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := map[string][]byte{}
			for k, v := range c.in {
				in[k] = []byte(v)
			}
			out, err := (&awsprovider.Provider{}).EtcdBackupSecretData(entry, in)
			if c.wantErr {
				if !errors.Is(err, objectstore.ErrInvalidConfig) {
					t.Fatalf("got %v; want ErrInvalidConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for k, v := range out {
				got[k] = string(v)
			}
			if !maps.Equal(got, c.want) {
				keys := slices.Sorted(maps.Keys(got))
				t.Fatalf("got keys %v = %v; want %v", keys, got, c.want)
			}
		})
	}
}

func TestMissingCredentialKeysAreRefused(t *testing.T) {
	p := &awsprovider.Provider{}
	for name, data := range map[string]map[string][]byte{
		"no keys":     {"region": []byte("eu-central-1")},
		"bad boolean": withData(minio.SecretData(), "s3ForcePathStyle", "maybe"),
		"bad CA":      withData(minio.SecretData(), "trustedCaCert", "not a certificate"),
		"no region":   withoutRegion(withData(minio.SecretData())),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := p.NewDataPlane(context.Background(), providerCreds(data))
			if !errors.Is(err, objectstore.ErrInvalidConfig) {
				t.Fatalf("got %v; want ErrInvalidConfig", err)
			}
			if _, merr := p.NewManagement(context.Background(), providerCreds(data), &awsapi.BackupBucketConfig{}); !errors.Is(merr, objectstore.ErrInvalidConfig) {
				t.Fatalf("management plane: got %v; want ErrInvalidConfig", merr)
			}
			for _, v := range data {
				if len(v) > 3 && strings.Contains(err.Error(), string(v)) {
					t.Fatalf("the error reveals a secret value: %v", err)
				}
			}
		})
	}
}

// testCA is a PEM CA certificate (httptest's), for keys that must hold a parseable one.
func testCA(t *testing.T) string {
	t.Helper()
	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
}
