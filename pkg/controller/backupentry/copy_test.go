// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupentry"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestDeletionEmptiesTheCopyToo: an entry's deletion deletes its prefix in the copy bucket its
// config declares, after the primary's, and nothing else there; without the copy's credentials
// the deletion is not done (the finalizer stays), and the error names the Seed's field.
func TestDeletionEmptiesTheCopyToo(t *testing.T) {
	ctx := context.Background()
	entry := []string{"shoot--a--b--1/etcd-main/v2/Full-00000000-00000001-1", "shoot--a--b--1/etcd-main/v2/Incr-00000002-00000003-2"}
	neighbour := "shoot--a--b--10/etcd-main/v2/Full-00000000-00000001-1"
	mem := controllertest.Bucket(t, "bucket", append(entry, neighbour)...)
	if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket-copy"}); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(entry, neighbour) {
		if err := mem.PutObject(ctx, "bucket-copy", k, []byte("copy of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	c8t := controllertest.Client()
	d := backupentry.NewDelegate(provider.Register(controllertest.Provider{Store: mem}), c8t, events.NewFakeRecorder(10), options.DeletionOptions{})
	cfg := controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy"}}}
	// Deleted long ago: no pass of the entry copy can still write (CopyPassWaitError).
	deleted := metav1.NewTime(time.Now().Add(-time.Hour))
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: "shoot--a--b--1", DeletionTimestamp: &deleted},
		Spec: extensionsv1alpha1.BackupEntrySpec{BucketName: "bucket", SecretRef: controllertest.SecretRef,
			DefaultSpec: extensionsv1alpha1.DefaultSpec{ProviderConfig: controllertest.RawConfig(cfg)}}}

	err := d.Delete(ctx, logr.Discard(), be)
	if !errors.Is(err, connect.ErrCopySecretMissing) || !strings.Contains(err.Error(), "spec.resources") {
		t.Fatalf("Delete without the copy's credentials = %v; want not done, naming the Seed's spec.resources", err)
	}
	if left, _ := conformance.ListKeys(ctx, mem, "bucket-copy", ""); len(left) != 3 {
		t.Fatalf("the copy holds %v; want it untouched without its credentials", left)
	}
	if err := c8t.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, logr.Discard(), be); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	for _, bucket := range []string{"bucket", "bucket-copy"} {
		if left, _ := conformance.ListKeys(ctx, mem, bucket, ""); strings.Join(left, ",") != neighbour {
			t.Errorf("%s holds %v; want only the neighbour", bucket, left)
		}
	}
}
