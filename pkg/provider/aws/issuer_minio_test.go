// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
)

// newIssuer builds p's issuer named name from data, as the bucket controller does, and fails
// the test if there is none.
func newIssuer(t *testing.T, p *awsprovider.Provider, data map[string][]byte, cfg *awsapi.BackupBucketConfig, name string) objectstore.CredentialIssuer {
	t.Helper()
	i, err := p.NewIssuer(context.Background(), provider.Credentials{Data: data, Region: "eu-central-1"}, cfg, name)
	if err != nil {
		t.Fatal(err)
	}
	if i == nil {
		t.Fatalf("no %q issuer for these credentials", name)
	}
	return i
}

// minioIssuerConfig is minioConfig with generated credentials issued by MinIO.
func minioIssuerConfig() *awsapi.BackupBucketConfig {
	cfg := minioConfig()
	cfg.GeneratedCredentials = &awsapi.GeneratedCredentialsConfig{Issuer: awsapi.IssuerMinIO}
	return cfg
}

func TestGeneratedMinIOCredentials(t *testing.T) {
	cfg := minioIssuerConfig()
	conformance.RunIssuer(t, conformance.IssuerHarness{
		Harness:  conformance.Harness{Store: newStoreWith(t, &awsprovider.Provider{}, minio.SecretData(), cfg), NewBucketName: newBucketName, Region: "eu-central-1"},
		Issuer:   newIssuer(t, &awsprovider.Provider{}, minio.SecretData(), cfg, cfg.GenerationSettings().Issuer),
		StoreFor: func(t *testing.T, data map[string][]byte) conformance.Stores { return newStore(t, data) },
	})
}

func TestGeneratedCredentialsNeedAnEndpointAndKeys(t *testing.T) {
	data := minio.SecretData()
	delete(data, "endpoint")
	_, err := (&awsprovider.Provider{}).NewIssuer(context.Background(), provider.Credentials{Data: data, Region: "eu-central-1"}, minioIssuerConfig(), awsapi.IssuerMinIO)
	if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), `"endpoint"`) {
		t.Fatalf("got %v; want ErrInvalidConfig naming the endpoint key", err)
	}
}

func TestStoreWithoutMinIOAdminAPICannotIssue(t *testing.T) {
	// An S3-compatible store of another make: the admin path is read as an object of a bucket
	// named "minio", which does not exist.
	var requests atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><BucketName>minio</BucketName></Error>`))
	}))
	defer other.Close()
	iss := newIssuer(t, &awsprovider.Provider{}, withData(minio.SecretData(), "endpoint", other.URL), minioIssuerConfig(), awsapi.IssuerMinIO)
	_, err := iss.IssueCredential(context.Background(), "bucket", nil)
	if !errors.Is(err, objectstore.ErrUnsupported) || !strings.Contains(err.Error(), "allowPassThrough") || requests.Load() == 0 {
		t.Fatalf("got %v after %d requests; want ErrUnsupported naming allowPassThrough", err, requests.Load())
	}
}
