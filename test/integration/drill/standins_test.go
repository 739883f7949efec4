// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package drill_test

import (
	"context"
	"testing"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/standin"
)

// standIn is one provider's stand-in with a bucket made: the etcd-backup secret the sidecar gets
// (as etcd-druid mounts it), how etcd-druid runs the sidecar for that provider, and the
// provider's own DataPlane (NewDataPlane with the same credentials), which the drill reads through.
type standIn struct {
	bucket   string
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

// thorough is the provider whose stand-in runs every compression and the corruption cases: the
// decoding of every compression is the drill's own (no provider's concern), so the others run one
// uncompressed and one compressed chain each.
const thorough = awsprovider.Type

// chains are the compressions a stand-in runs, and whether the corruption cases run on it.
func chains(s standin.StandIn) ([]compression, bool) {
	if s.Type == thorough {
		return []compression{uncompressed, gzipped, zlibbed, lzw}, true
	}
	return []compression{uncompressed, gzipped}, false
}

// made is the standIn of a started stand-in: the bucket made through the provider's management
// plane with the operator's credentials and the stand-in's providerConfig, and the etcd-backup
// secret the provider writes for an entry of it (EtcdBackupSecretData, as the controller does).
func made(t *testing.T, ctx context.Context, s standin.StandIn, w *standin.World) standIn {
	t.Helper()
	return madeIn(t, ctx, s, w, bucket, true)
}

// madeIn is made for the bucket name; ensure false: the bucket exists already, made by the test
// (an S3 bucket with Object Lock), and the management plane is not asked.
func madeIn(t *testing.T, ctx context.Context, s standin.StandIn, w *standin.World, bucket string, ensure bool) standIn {
	t.Helper()
	creds := provider.Credentials{Data: w.Operator, Region: s.Region}
	var raw []byte
	if w.ProviderConfig != "" {
		raw = []byte(w.ProviderConfig)
	}
	cfg, err := w.Cloud.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	mgmt, err := cfg.NewManagement(ctx, creds)
	if err != nil {
		t.Fatal(err)
	}
	if ensure {
		if err := mgmt.EnsureBucket(ctx, objectstore.Bucket{Name: bucket, Region: s.Region}); err != nil {
			t.Fatal(err)
		}
	}
	store, err := w.Cloud.NewDataPlane(ctx, creds)
	if err != nil {
		t.Fatal(err)
	}
	entry := &extensionsv1alpha1.BackupEntry{Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: bucket, Region: s.Region}}
	secret, err := w.Cloud.EtcdBackupSecretData(entry, stack.With(w.Operator, "bucketName", bucket))
	if err != nil {
		t.Fatal(err)
	}
	return standIn{bucket: bucket, secret: secret, consumer: w.Consumer, store: store}
}
