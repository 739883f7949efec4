package aws_test

import (
	"context"
	"errors"
	"strings"
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
