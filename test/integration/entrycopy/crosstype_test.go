// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycopy"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	awsprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/aws"
	azureprovider "github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider/azure"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
	azurestack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/azure"
)

// TestCopyToAnotherStoreType: the real aws binary copies a MinIO bucket's entries into an Azurite
// container (copy.type azure, an account-key secret): the aws binary provisions the copy container
// with azure's management, copies the snapshots with azure's data plane, and the entry's deletion
// empties its prefix in both stores and nothing else.
func TestCopyToAnotherStoreType(t *testing.T) {
	ctx := context.Background()
	primary, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Stop()
	azurite, err := azurestack.StartAzurite()
	if err != nil {
		t.Fatal(err)
	}
	defer azurite.Stop()
	bin := framework.StartBinary(t, ctx, &awsprovider.Provider{}, region, t.TempDir(), "--entry-copy-interval", "2s")
	env := bin.Env
	data := primary.SecretData()
	env.CreateSecret(t, "garden", "ref-backup-copy", azurite.SecretData())

	config := minio + `,"copy":{"type":"azure","credentialsRef":"backup-copy","rpo":"15m"}}`
	bb := env.CreateBucket(t, framework.UniqueName("cross-"), data, config)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	env.WaitFor(t, bb, time.Minute, "copy container ready", func(obj extensionsv1alpha1.Object) bool {
		return condition(obj, backupbucket.ConditionCopyBucketReady, gardencorev1beta1.ConditionTrue, backupbucket.ReasonCopyBucketReady)
	})
	copyBucket := bb.Name + "-copy"
	copyStore, err := framework.Registered(&azureprovider.Provider{}).Stores(ctx, provider.Credentials{Data: azurite.SecretData(), Region: region})
	if err != nil {
		t.Fatal(err)
	}
	if err := copyStore.Probe(ctx, copyBucket); err != nil {
		t.Fatalf("probing the copy container %s in Azurite: %v; want it provisioned", copyBucket, err)
	}

	entry := framework.UniqueName("shoot--cross--") + "--1"
	neighbour := strings.TrimSuffix(entry, "--1") + "0--1" // a prefix that begins like the entry's
	snaps := writeSnapshots(t, env, bb.Name, data, config, entry, neighbour)
	for _, name := range []string{entry, neighbour} {
		be := &extensionsv1alpha1.BackupEntry{}
		be.Name = name
		env.WaitFor(t, be, 2*time.Minute, "BackupsCopied True with both snapshots", func(obj extensionsv1alpha1.Object) bool {
			return condition(obj, entrycopy.ConditionBackupsCopied, gardencorev1beta1.ConditionTrue, entrycopy.ReasonCopied, "(2 in sync)")
		})
		got, err := conformance.ListKeys(ctx, copyStore, copyBucket, name+"/")
		if err != nil || !slices.Equal(got, snaps[name]) {
			t.Fatalf("the copy holds %v (%v) of %s; want %v", got, err, name, snaps[name])
		}
		for _, k := range snaps[name] {
			if b, err := readAll(ctx, copyStore, copyBucket, k); err != nil || string(b) != "snapshot "+k {
				t.Fatalf("the copy's %s holds %q (%v); want the primary's content", k, b, err)
			}
		}
	}

	// The entry's deletion empties its prefix in both stores and nothing else.
	be := &extensionsv1alpha1.BackupEntry{}
	be.Name = entry
	env.DeleteAndWaitGone(t, be, connect.CopyPassDeadline+3*time.Minute)
	deletedInBoth(t, env.StoreFor(t, data), bb.Name, copyStore, copyBucket, entry, neighbour, snaps[neighbour])
}

// readAll reads key's current version in bucket.
func readAll(ctx context.Context, store objectstore.DataPlane, bucket, key string) ([]byte, error) {
	r, err := store.OpenObject(ctx, bucket, key, "")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
