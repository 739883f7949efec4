// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"encoding/base64"
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
	"github.com/gardener-extension-backup/gardener-extension-backup/test/badinput"
)

func TestEtcdBackupSecretData(t *testing.T) {
	ca := testCA(t)
	entry := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{Region: "eu-west-1"}}
	wiConfig := "apiVersion: aws.provider.extensions.gardener.cloud/v1alpha1\nkind: WorkloadIdentityConfig\nroleARN: arn:aws:iam::1:role/r\n"
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	static := func(extra ...string) map[string]string {
		m := map[string]string{"accessKeyID": "id", "secretAccessKey": "s", "bucketName": "b"}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	cases := []struct {
		name    string
		in      map[string]string
		want    map[string]string
		wantErr bool
		// names are what the error must name (the secret key), never its value.
		names []string
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
		{name: "a customer key (SSE-C) and the checksum modes pass through",
			in:   static("sseCustomerKey", key, "sseCustomerAlgorithm", "AES256", "requestChecksumCalculation", "when_required", "responseChecksumValidation", "WHEN_SUPPORTED"),
			want: static("region", "eu-west-1", "sseCustomerKey", key, "sseCustomerAlgorithm", "AES256", "requestChecksumCalculation", "when_required", "responseChecksumValidation", "WHEN_SUPPORTED")},
		{name: "a customer key without its algorithm", in: static("sseCustomerKey", key), wantErr: true, names: []string{"sseCustomerKey", "sseCustomerAlgorithm"}},
		{name: "an algorithm without a key", in: static("sseCustomerAlgorithm", "AES256"), wantErr: true, names: []string{"sseCustomerKey", "sseCustomerAlgorithm"}},
		{name: "an algorithm S3 does not offer", in: static("sseCustomerKey", key, "sseCustomerAlgorithm", "aws:kms"), wantErr: true, names: []string{"sseCustomerAlgorithm", "AES256"}},
		{name: "a customer key with a newline", in: static("sseCustomerKey", key+"\n", "sseCustomerAlgorithm", "AES256"), wantErr: true, names: []string{"sseCustomerKey", "base64"}},
		{name: "a customer key of 32 raw bytes, not base64", in: static("sseCustomerKey", "0123456789abcdef0123456789abcdef", "sseCustomerAlgorithm", "AES256"), wantErr: true, names: []string{"sseCustomerKey", "256-bit"}},
		{name: "a customer key of 128 bits", in: static("sseCustomerKey", base64.StdEncoding.EncodeToString([]byte("0123456789abcdef")), "sseCustomerAlgorithm", "AES256"), wantErr: true, names: []string{"sseCustomerKey"}},
		{name: "an unknown request checksum mode", in: static("requestChecksumCalculation", "always"), wantErr: true, names: []string{"requestChecksumCalculation", "when_supported or when_required"}},
		{name: "a response checksum mode with a newline", in: static("responseChecksumValidation", "when_required\n"), wantErr: true, names: []string{"responseChecksumValidation"}},
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
				badinput.WantConfigurationProblem(t, err)
				for _, n := range c.names {
					if !strings.Contains(err.Error(), n) {
						t.Errorf("the error does not name %q: %v", n, err)
					}
				}
				for k, v := range c.in {
					if len(v) > 3 && k != "bucketName" && strings.Contains(err.Error(), v) {
						t.Errorf("the error reveals the value of %q: %v", k, err)
					}
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
