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

// issuer is the bucket controller's view of a MinIO store with generated credentials.
func issuer(t *testing.T) (objectstore.Store, objectstore.CredentialIssuer) {
	t.Helper()
	cfg := minioConfig()
	cfg.GeneratedCredentials = &awsapi.GeneratedCredentialsConfig{Issuer: awsapi.IssuerMinIO}
	s, err := (&awsprovider.Provider{}).NewStore(context.Background(), provider.Credentials{Data: minio.SecretData(), Region: "eu-central-1", BucketConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	i, ok := s.(objectstore.CredentialIssuer)
	if !ok {
		t.Fatal("a store configured with generatedCredentials issues no credentials")
	}
	return s, i
}

func TestGeneratedMinIOCredentials(t *testing.T) {
	s, _ := issuer(t)
	conformance.RunIssuer(t, conformance.IssuerHarness{
		Harness:  conformance.Harness{Store: s, NewBucketName: newBucketName, Region: "eu-central-1", Config: minioConfig()},
		StoreFor: func(t *testing.T, data map[string][]byte) objectstore.Store { return newStore(t, data) },
	})
}

func TestGeneratedCredentialsNeedAnEndpointAndKeys(t *testing.T) {
	cfg := minioConfig()
	cfg.GeneratedCredentials = &awsapi.GeneratedCredentialsConfig{Issuer: awsapi.IssuerMinIO}
	data := minio.SecretData()
	delete(data, "endpoint")
	_, err := (&awsprovider.Provider{}).NewStore(context.Background(), provider.Credentials{Data: data, Region: "eu-central-1", BucketConfig: cfg})
	if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), `"endpoint"`) {
		t.Fatalf("got %v; want ErrInvalidConfig naming the endpoint key", err)
	}
}

func TestStoreWithoutMinIOAdminAPICannotIssue(t *testing.T) {
	// An S3-compatible store of another make: the admin path is read as an object of a bucket
	// named "minio", which does not exist.
	var requests atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><BucketName>minio</BucketName></Error>`))
	}))
	defer other.Close()
	cfg := minioConfig()
	cfg.GeneratedCredentials = &awsapi.GeneratedCredentialsConfig{Issuer: awsapi.IssuerMinIO}
	s, err := (&awsprovider.Provider{}).NewStore(context.Background(), provider.Credentials{Data: withData(minio.SecretData(), "endpoint", other.URL), Region: "eu-central-1", BucketConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.(objectstore.CredentialIssuer).IssueCredential(context.Background(), "bucket", nil)
	if !errors.Is(err, objectstore.ErrUnsupported) || !strings.Contains(err.Error(), "allowPassThrough") || requests.Load() == 0 {
		t.Fatalf("got %v after %d requests; want ErrUnsupported naming allowPassThrough", err, requests.Load())
	}
}
