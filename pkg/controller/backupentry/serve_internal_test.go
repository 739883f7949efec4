// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestEtcdBackupServedFromTheCopy: with copy.serve copy, etcd-backup holds the copy bucket's
// name, the copy's region and the copy's credentials, not the entry's; without the copy's
// credentials, or with a copy bucket that does not exist, the entry fails and names why; on a
// gcp seed it is refused as a configuration problem.
func TestEtcdBackupServedFromTheCopy(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T, secret bool) *entryFixture {
		f := newEntryFixture(t, false)
		s := &copystore.Settings{CredentialsRef: "backup-copy", BucketName: sharedCopy, Region: "far", Serve: copystore.ServeCopy}
		if secret {
			if err := f.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: copystore.CredentialsNamespace, Name: s.CredentialsSecret()},
				Data: map[string][]byte{"key": []byte("the copy's")}}); err != nil {
				t.Fatal(err)
			}
		}
		be := f.current()
		be.Spec.ProviderConfig = controllertest.RawConfig(controllertest.Config{CopyField: copystore.CopyField{Copy: s}})
		if err := f.client.Update(ctx, be); err != nil {
			t.Fatal(err)
		}
		f.be = f.current()
		return f
	}
	entryData := map[string][]byte{"key": []byte("value"), v1beta1constants.DataKeyBackupBucketName: []byte(testBucket)}

	t.Run("the copy's bucket and credentials", func(t *testing.T) {
		f := setup(t, true)
		if err := f.mem.EnsureBucket(ctx, objectstore.Bucket{Name: sharedCopy}); err != nil {
			t.Fatal(err)
		}
		out, err := f.delegate().GetETCDSecretData(ctx, logr.Discard(), f.be, entryData)
		if err != nil {
			t.Fatal(err)
		}
		if string(out[v1beta1constants.DataKeyBackupBucketName]) != sharedCopy || string(out["accessKey"]) != "the copy's" {
			t.Fatalf("etcd-backup %q; want the copy bucket %q and the copy's credentials", out, sharedCopy)
		}
	})
	t.Run("the copy bucket does not exist", func(t *testing.T) {
		f := setup(t, true)
		_, err := f.delegate().GetETCDSecretData(ctx, logr.Discard(), f.be, entryData)
		if !errors.Is(err, objectstore.ErrInvalidConfig) || !errors.Is(err, objectstore.ErrBucketNotFound) {
			t.Fatalf("error %v; want the copy bucket not found, a configuration problem", err)
		}
	})
	t.Run("without the copy's credentials", func(t *testing.T) {
		f := setup(t, false)
		_, err := f.delegate().GetETCDSecretData(ctx, logr.Discard(), f.be, entryData)
		if !errors.Is(err, connect.ErrCopySecretMissing) {
			t.Fatalf("error %v; want the copy's secret named missing", err)
		}
	})
	t.Run("on a gcp seed", func(t *testing.T) {
		f := setup(t, true)
		ns := &corev1.Namespace{}
		if err := f.client.Get(ctx, client.ObjectKey{Name: testNamespace}, ns); err != nil {
			t.Fatal(err)
		}
		ns.Labels = map[string]string{v1beta1constants.LabelSeedProvider: "gcp"}
		if err := f.client.Update(ctx, ns); err != nil {
			t.Fatal(err)
		}
		_, err := f.delegate().GetETCDSecretData(ctx, logr.Discard(), f.be, entryData)
		if !errors.Is(err, objectstore.ErrInvalidConfig) {
			t.Fatalf("error %v; want copy.serve refused as a configuration problem", err)
		}
	})
}
