package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	awsapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/aws"
	azureapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/azure"
	gcpapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/gcp"
	localapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/local"
	osapi "github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	gcpprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/gcp"
	localprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/local"
	osprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/openstack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// objectStore is the local stand-in the demo runs a provider against.
type objectStore struct {
	// what is started, for the account.
	what, where string
	// secretData are credentials reaching it, put into the example's secrets.
	secretData map[string][]byte
	// providerConfig, if set, replaces the example's (a stand-in may lack a setting).
	providerConfig []byte
	// direct reaches it with the same credentials, to write snapshots and list what is left.
	direct conformance.Stores
	// bucket describes the bucket's settings, or fails if it does not exist.
	bucket func(ctx context.Context, name string) (string, error)
	// consumer is how etcd-druid would run etcd-backup-restore against this store.
	consumer func(testing.TB) stack.Consumer
	// flags are the extension binary's own flags for this store, beside the demo's.
	flags []string
	stop  func()
}

func startObjectStore(ctx context.Context, providerType, region string) (*objectStore, error) {
	switch providerType {
	case awsprovider.Type:
		minio, err := stack.StartMinIO(ctx, stack.MinIOOptions{Region: region})
		if err != nil {
			return nil, err
		}
		data := minio.SecretData()
		delete(data, "region")
		direct, err := conformance.NewStores(ctx, &awsprovider.Provider{}, provider.Credentials{Data: data, Region: region}, &awsapi.BackupBucketConfig{})
		if err != nil {
			minio.Stop()
			return nil, err
		}
		return &objectStore{
			what:       "MinIO (S3-compatible), with a KMS key for default encryption",
			where:      fmt.Sprintf("MinIO %s, region %s", minio.Endpoint, minio.Region),
			secretData: data,
			// MinIO implements neither the public access block nor multipart-abort lifecycle rules.
			providerConfig: []byte(`{"apiVersion":"aws.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","disabledSettings":["PublicAccessBlock","MultipartAbortLifecycle"]}`),
			direct:         direct,
			bucket: func(ctx context.Context, name string) (string, error) {
				enc, err := minio.S3Client().GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: &name})
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("default encryption %s; TLS-only bucket policy set", enc.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm), nil
			},
			consumer: func(testing.TB) stack.Consumer { return stack.S3Consumer },
			stop:     minio.Stop,
		}, nil
	case gcpprovider.Type:
		gcs, err := stack.StartGCS(stack.GCSOptions{})
		if err != nil {
			return nil, err
		}
		data := gcs.SecretData()
		direct, err := conformance.NewStores(ctx, &gcpprovider.Provider{}, provider.Credentials{Data: data, Region: region}, &gcpapi.BackupBucketConfig{})
		if err != nil {
			gcs.Stop()
			return nil, err
		}
		return &objectStore{
			what:       "fake-gcs-server behind the GCS stand-in front (OAuth, bucket settings)",
			where:      fmt.Sprintf("GCS endpoint %s, project %s", gcs.Endpoint, gcs.ProjectID),
			secretData: data,
			direct:     direct,
			bucket: func(ctx context.Context, name string) (string, error) {
				if err := direct.ListObjects(ctx, name, "", func([]objectstore.ObjectVersion) error { return nil }); err != nil {
					return "", err
				}
				iam, _ := gcs.BucketField(name, "iamConfiguration")
				labels, _ := gcs.BucketField(name, "labels")
				var lc struct {
					Rule []json.RawMessage `json:"rule"`
				}
				raw, _ := gcs.BucketField(name, "lifecycle")
				_ = json.Unmarshal(raw, &lc)
				return fmt.Sprintf("iamConfiguration %s; %d lifecycle rules; labels %s", iam, len(lc.Rule), labels), nil
			},
			consumer: func(t testing.TB) stack.Consumer { return stack.GCSConsumer(t, gcs) },
			stop:     gcs.Stop,
		}, nil
	case azureprovider.Type:
		azurite, err := stack.StartAzurite()
		if err != nil {
			return nil, err
		}
		data := azurite.SecretData()
		direct, err := conformance.NewStores(ctx, &azureprovider.Provider{}, provider.Credentials{Data: data, Region: region}, &azureapi.BackupBucketConfig{})
		if err != nil {
			azurite.Stop()
			return nil, err
		}
		return &objectStore{
			what:       "Azurite (Azure Blob emulator), existing-account mode",
			where:      fmt.Sprintf("Azurite http://%s/%s", azurite.Host, stack.AzuriteAccount),
			secretData: data,
			direct:     direct,
			bucket: func(ctx context.Context, name string) (string, error) {
				if err := direct.ListObjects(ctx, name, "", func([]objectstore.ObjectVersion) error { return nil }); err != nil {
					return "", err
				}
				return "private container", nil
			},
			consumer: func(testing.TB) stack.Consumer { return stack.ABSConsumer(azurite, stack.AzuriteAccount) },
			stop:     azurite.Stop,
		}, nil
	case localprovider.Type:
		return startLocal(ctx, region)
	case osprovider.Type:
		return startOpenStack(ctx, region)
	}
	return nil, fmt.Errorf("the demo has no local object store for provider %q", providerType)
}

// startLocal is a temporary root directory: the extension's --local-root, and the hostPath that
// etcd-druid would mount for etcd-backup-restore.
func startLocal(ctx context.Context, region string) (*objectStore, error) {
	root, err := os.MkdirTemp("", "demo-local-buckets-")
	if err != nil {
		return nil, err
	}
	p := &localprovider.Provider{Root: root}
	direct, err := conformance.NewStores(ctx, p, provider.Credentials{Data: map[string][]byte{}, Region: region}, &localapi.BackupBucketConfig{})
	if err != nil {
		_ = os.RemoveAll(root)
		return nil, err
	}
	return &objectStore{
		what:       "a directory on this machine (etcd-backup-restore's Local storage provider)",
		where:      "root " + root,
		secretData: map[string][]byte{},
		direct:     direct,
		bucket: func(ctx context.Context, name string) (string, error) {
			if err := direct.Probe(ctx, name); err != nil {
				return "", err
			}
			return "directory " + filepath.Join(root, name) + " with the marker " + localprovider.MarkerFile, nil
		},
		consumer: func(testing.TB) stack.Consumer { return stack.LocalConsumer },
		flags:    []string{"--" + localprovider.FlagRoot, root},
		stop:     func() { _ = os.RemoveAll(root) },
	}, nil
}

// startOpenStack is a real Keystone and Swift (Debian's packages, hack/openstack.sh) on loopback,
// reached as the project demo's member user.
func startOpenStack(ctx context.Context, region string) (*objectStore, error) {
	cloud, err := stack.StartOpenStack(10000)
	if err != nil {
		return nil, err
	}
	data := cloud.SecretData("demo")
	direct, err := conformance.NewStores(ctx, &osprovider.Provider{}, provider.Credentials{Data: data, Region: region}, &osapi.BackupBucketConfig{})
	if err != nil {
		cloud.Stop()
		return nil, err
	}
	return &objectStore{
		what:       "real OpenStack Swift and Keystone v3 (Debian's packages) on loopback",
		where:      "Keystone " + cloud.AuthURL + ", project demo",
		secretData: data,
		direct:     direct,
		bucket: func(ctx context.Context, name string) (string, error) {
			if err := direct.Probe(ctx, name); err != nil {
				return "", err
			}
			return "Swift container", nil
		},
		consumer: func(testing.TB) stack.Consumer { return stack.SwiftConsumer },
		stop:     cloud.Stop,
	}, nil
}
