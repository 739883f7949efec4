package drill_test

import (
	"context"
	"maps"
	"testing"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// standIn is one provider's stand-in with a bucket made: the etcd-backup secret the sidecar gets
// (as etcd-druid mounts it), how etcd-druid runs the sidecar for that provider, and the
// provider's own DataPlane (NewDataPlane with the same credentials), which the drill reads through.
type standIn struct {
	secret   map[string][]byte
	consumer stack.Consumer
	store    objectstore.DataPlane
}

// compression is one way etcd-backup-restore writes its snapshots: the sidecar's flags and the
// suffix its names then carry.
type compression struct {
	name, suffix string
	flags        []string
}

var (
	uncompressed = compression{"uncompressed", "", []string{"--compress-snapshots=false"}}
	gzipped      = compression{"gzip", ".gz", []string{"--compress-snapshots=true", "--compression-policy=gzip"}}
	zlibbed      = compression{"zlib", ".zlib", []string{"--compress-snapshots=true", "--compression-policy=zlib"}}
	lzw          = compression{"lzw", ".Z", []string{"--compress-snapshots=true", "--compression-policy=lzw"}}
)

// providers is the table every provider's stand-in runs: the decoding of every compression is
// the drill's own (no provider's concern), so aws runs them all and the corruption cases, the
// others one uncompressed and one compressed chain each.
var providers = []struct {
	name         string
	start        func(t *testing.T, ctx context.Context) standIn
	compressions []compression
	damage       bool
	// manifests: the sidecar uploads every snapshot as a large object (etcd-backup-restore's
	// Swift store: segments and a manifest), which the listing shows with 0 bytes, so the
	// chain's listed size says nothing of what a drill reads.
	manifests bool
}{
	{"aws (MinIO)", startAWS, []compression{uncompressed, gzipped, zlibbed, lzw}, true, false},
	{"gcp (fake-gcs-server behind the GCS front)", startGCP, []compression{uncompressed, gzipped}, false, false},
	{"azure (Azurite)", startAzure, []compression{uncompressed, gzipped}, false, false},
	{"openstack (Swift and Keystone)", startOpenStack, []compression{uncompressed, gzipped}, false, true},
}

// made is the standIn of a provider's data, with the bucket made through the provider's
// management plane.
func made[C any](t *testing.T, ctx context.Context, c interface {
	NewDataPlane(context.Context, provider.Credentials) (objectstore.DataPlane, error)
	NewManagement(context.Context, provider.Credentials, C) (objectstore.Management, error)
}, creds provider.Credentials, cfg C, secret map[string][]byte, consumer stack.Consumer) standIn {
	t.Helper()
	mgmt, err := c.NewManagement(ctx, creds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := mgmt.EnsureBucket(ctx, objectstore.Bucket{Name: bucket, Region: creds.Region}); err != nil {
		t.Fatal(err)
	}
	store, err := c.NewDataPlane(ctx, creds)
	if err != nil {
		t.Fatal(err)
	}
	secret = maps.Clone(secret)
	secret["bucketName"] = []byte(bucket)
	return standIn{secret: secret, consumer: consumer, store: store}
}

func startAWS(t *testing.T, ctx context.Context) standIn {
	minio, err := stack.StartMinIO(ctx, stack.MinIOOptions{Region: "eu-central-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(minio.Stop)
	data := minio.SecretData()
	delete(data, "region")
	// MinIO implements neither the public access block nor multipart-abort lifecycle rules.
	cfg := &awsapi.BackupBucketConfig{DisabledSettings: []awsapi.Setting{awsapi.SettingPublicAccessBlock, awsapi.SettingMultipartAbortLifecycle}}
	return made(t, ctx, &awsprovider.Provider{}, provider.Credentials{Data: data, Region: minio.Region}, cfg, minio.SecretData(), stack.S3Consumer)
}

func startGCP(t *testing.T, ctx context.Context) standIn {
	gcs, err := stack.StartGCS(stack.GCSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gcs.Stop)
	data := gcs.SecretData()
	return made(t, ctx, &gcpprovider.Provider{IAMEndpoint: gcs.URL + "/"}, provider.Credentials{Data: data, Region: "europe-west1"},
		&gcpapi.BackupBucketConfig{}, data, stack.GCSConsumer(t, gcs))
}

func startAzure(t *testing.T, ctx context.Context) standIn {
	azurite, err := stack.StartAzurite()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(azurite.Stop)
	data := azurite.SecretData()
	return made(t, ctx, &azureprovider.Provider{}, provider.Credentials{Data: data, Region: "westeurope"},
		&azureapi.BackupBucketConfig{}, data, stack.ABSConsumer(azurite, stack.AzuriteAccount))
}

func startOpenStack(t *testing.T, ctx context.Context) standIn {
	cloud, err := stack.StartOpenStack(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cloud.Stop)
	data := cloud.SecretData("demo")
	return made(t, ctx, &osprovider.Provider{}, provider.Credentials{Data: data, Region: "RegionOne"},
		&osapi.BackupBucketConfig{}, data, stack.SwiftConsumer)
}
