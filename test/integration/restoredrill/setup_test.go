// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// drillStack is what every test here starts from: MinIO in region, and the aws binary on envtest
// with flags (dir its working directory), both ended with t.
type drillStack struct {
	minio *awsstack.MinIO
	bin   *framework.Binary
	env   *framework.Env
	// data is MinIO's secret data for the extension's secrets, without the region (the
	// bucket's spec has it).
	data map[string][]byte
}

func startDrillStack(t *testing.T, ctx context.Context, dir string, flags ...string) drillStack {
	t.Helper()
	minio, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(minio.Stop)
	bin := framework.StartBinary(t, ctx, &awsprovider.Provider{}, region, dir, flags...)
	data := minio.SecretData()
	delete(data, "region")
	return drillStack{minio: minio, bin: bin, env: bin.Env, data: data}
}

// bucket creates a BackupBucket named from prefix and waits for its reconcile.
func (s drillStack) bucket(t *testing.T, prefix string) *extensionsv1alpha1.BackupBucket {
	t.Helper()
	bb := s.env.CreateBucket(t, framework.UniqueName(prefix), s.data, minioConfig)
	s.env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	return bb
}

// entry creates BackupEntry name (<shoot's namespace>--1) of bucket, in its shoot's namespace,
// and waits for its reconcile.
func (s drillStack) entry(t *testing.T, name, bucket string) *extensionsv1alpha1.BackupEntry {
	t.Helper()
	s.env.EnsureNamespace(t, strings.TrimSuffix(name, "--1"))
	be := s.env.CreateEntry(t, name, bucket, s.data)
	s.env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)
	return be
}

// backupSecret is the etcd-backup secret's data etcd-backup-restore reads bucket with.
func (s drillStack) backupSecret(bucket string) map[string][]byte {
	secret := maps.Clone(s.minio.SecretData())
	secret["bucketName"] = []byte(bucket)
	return secret
}
