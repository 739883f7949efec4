// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"strings"
	"testing"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	"github.com/go-logr/logr"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
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

	// etcd gives the shoot an Etcd whose backup store names container.
	etcd := func(t *testing.T, f *entryFixture, container string) {
		t.Helper()
		e := &druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "etcd-main"},
			Spec: druidcorev1alpha1.EtcdSpec{Backup: druidcorev1alpha1.BackupSpec{Store: &druidcorev1alpha1.StoreSpec{Container: new(container)}}}}
		if err := f.client.Create(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	serve := func(t *testing.T, f *entryFixture, serve copystore.Serve) {
		t.Helper()
		be := f.current()
		be.Spec.ProviderConfig = controllertest.RawConfig(controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy", BucketName: sharedCopy, Region: "far", Serve: serve}}})
		if err := f.client.Update(ctx, be); err != nil {
			t.Fatal(err)
		}
		f.be = f.current()
	}
	holds := func(t *testing.T, f *entryFixture, bucket, key string) {
		t.Helper()
		out, err := f.delegate().GetETCDSecretData(ctx, logr.Discard(), f.be, entryData)
		if err != nil {
			t.Fatal(err)
		}
		if string(out[v1beta1constants.DataKeyBackupBucketName]) != bucket || string(out["accessKey"]) != key {
			t.Fatalf("etcd-backup names bucket %q with the credential %q; want bucket %q with %q", out[v1beta1constants.DataKeyBackupBucketName], out["accessKey"], bucket, key)
		}
	}
	event := func(t *testing.T, f *entryFixture, saying string) {
		t.Helper()
		for {
			select {
			case e := <-f.recorder.Events:
				if strings.Contains(e, saying) {
					return
				}
			default:
				t.Fatalf("no event saying %q", saying)
			}
		}
	}

	t.Run("phase 1: the Etcd names the primary", func(t *testing.T) {
		f := setup(t, true)
		if err := f.mem.EnsureBucket(ctx, objectstore.Bucket{Name: sharedCopy}); err != nil {
			t.Fatal(err)
		}
		etcd(t, f, testBucket)
		holds(t, f, sharedCopy, "value")
		event(t, f, ReasonBackupSwitchPending+` switch pending: the Etcd still names bucket "bucket"`)
	})
	t.Run("phase 2: the Etcd names the copy", func(t *testing.T) {
		f := setup(t, true)
		if err := f.mem.EnsureBucket(ctx, objectstore.Bucket{Name: sharedCopy}); err != nil {
			t.Fatal(err)
		}
		etcd(t, f, sharedCopy)
		holds(t, f, sharedCopy, "the copy's")
	})
	t.Run("the record of the Etcd container each successful reconcile decided etcd-backup for", func(t *testing.T) {
		f := setup(t, true)
		if err := f.mem.EnsureBucket(ctx, objectstore.Bucket{Name: sharedCopy}); err != nil {
			t.Fatal(err)
		}
		recorded := func() string {
			t.Helper()
			ps, err := entryinfo.ReadProviderStatus(f.current())
			if err != nil {
				t.Fatal(err)
			}
			return ps.EtcdContainer
		}
		reconcile := func() error {
			f.be = f.current()
			return f.actuator().Reconcile(ctx, logr.Discard(), f.be)
		}
		if err := reconcile(); err != nil {
			t.Fatal(err)
		}
		if got := recorded(); got != "" {
			t.Fatalf("without an Etcd: recorded %q; want none", got)
		}
		etcd(t, f, testBucket)
		if err := reconcile(); err != nil {
			t.Fatal(err)
		}
		if got := recorded(); got != testBucket {
			t.Fatalf("the Etcd naming the primary: recorded %q; want %q", got, testBucket)
		}
		// The roll onto the copy, then a reconcile that fails: the record keeps what etcd-backup
		// was last decided for.
		e := &druidcorev1alpha1.Etcd{}
		if err := f.client.Get(ctx, client.ObjectKey{Namespace: testNamespace, Name: "etcd-main"}, e); err != nil {
			t.Fatal(err)
		}
		e.Spec.Backup.Store.Container = new(sharedCopy)
		if err := f.client.Update(ctx, e); err != nil {
			t.Fatal(err)
		}
		f.store.Fail(memstore.OpProbe, objectstore.ErrUnreachable)
		if err := reconcile(); err == nil {
			t.Fatal("the store unreachable: the reconcile succeeded; want it failed")
		}
		if got := recorded(); got != testBucket {
			t.Fatalf("after a failed reconcile: recorded %q; want %q, as before", got, testBucket)
		}
		f.store.Fail(memstore.OpProbe, nil)
		if err := reconcile(); err != nil {
			t.Fatal(err)
		}
		if got := recorded(); got != sharedCopy {
			t.Fatalf("the Etcd rolled onto the copy: recorded %q; want %q", got, sharedCopy)
		}
	})
	t.Run("phase 1, the primary bucket gone (failover): the copy's credentials at once", func(t *testing.T) {
		f := setup(t, true)
		if err := f.mem.EnsureBucket(ctx, objectstore.Bucket{Name: sharedCopy}); err != nil {
			t.Fatal(err)
		}
		// The entry's bucket is gone (the fixture's holds objects: another entry's bucket).
		be := f.current()
		be.Spec.BucketName = "gone"
		if err := f.client.Update(ctx, be); err != nil {
			t.Fatal(err)
		}
		f.be = f.current()
		etcd(t, f, "gone")
		holds(t, f, sharedCopy, "the copy's")
		event(t, f, ReasonBackupSwitchedAtOnce+` etcd-backup names bucket "shared-copy" with its credentials at once`)
	})
	t.Run("phase 1, the copy bucket does not exist: the entry fails", func(t *testing.T) {
		f := setup(t, true)
		etcd(t, f, testBucket)
		_, err := f.delegate().GetETCDSecretData(ctx, logr.Discard(), f.be, entryData)
		if !errors.Is(err, objectstore.ErrBucketNotFound) {
			t.Fatalf("error %v; want the copy bucket not found", err)
		}
	})
	t.Run("coming back: the Etcd still names the copy", func(t *testing.T) {
		f := setup(t, true)
		if err := f.mem.EnsureBucket(ctx, objectstore.Bucket{Name: sharedCopy}); err != nil {
			t.Fatal(err)
		}
		etcd(t, f, sharedCopy)
		serve(t, f, copystore.ServePrimary)
		holds(t, f, testBucket, "the copy's")
		event(t, f, ReasonBackupSwitchPending+` switch pending: the Etcd still names bucket "shared-copy"`)
	})
	t.Run("coming back, the copy's credentials gone: the primary's at once", func(t *testing.T) {
		f := setup(t, false)
		etcd(t, f, sharedCopy)
		serve(t, f, copystore.ServePrimary)
		holds(t, f, testBucket, "value")
	})
	t.Run("back: the Etcd names the primary", func(t *testing.T) {
		f := setup(t, true)
		etcd(t, f, testBucket)
		serve(t, f, copystore.ServePrimary)
		holds(t, f, testBucket, "value")
	})
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

// TestEtcdBackupFailoverConflict: while the entry's BackupBucket records an automatic failover
// to a copy bucket the configuration no longer declares (copy: removed, or another
// copy.bucketName), etcd-backup is not written: the entry fails with the configuration error,
// neither the primary nor the newly declared copy bucket is named.
func TestEtcdBackupFailoverConflict(t *testing.T) {
	ctx := context.Background()
	entryData := map[string][]byte{"key": []byte("value"), v1beta1constants.DataKeyBackupBucketName: []byte(testBucket)}
	for name, c := range map[string]struct {
		copy   *copystore.Settings
		saying string
	}{
		"copy: removed":       {saying: `copy: was removed while an automatic failover to bucket "recorded-copy" is recorded`},
		"another copy bucket": {copy: &copystore.Settings{CredentialsRef: "backup-copy", BucketName: sharedCopy}, saying: `the copy bucket is now "shared-copy", but an automatic failover to bucket "recorded-copy" is recorded`},
		"another, served":     {copy: &copystore.Settings{CredentialsRef: "backup-copy", BucketName: sharedCopy, Serve: copystore.ServeCopy}, saying: `automatic failover to bucket "recorded-copy" is recorded`},
	} {
		t.Run(name, func(t *testing.T) {
			f := newEntryFixture(t, false)
			bb := &extensionsv1alpha1.BackupBucket{ObjectMeta: metav1.ObjectMeta{Name: testBucket}}
			bb.Status.ProviderStatus = &runtime.RawExtension{Raw: []byte(`{"failover":{"at":"2026-11-29T12:00:00Z","copyBucket":"recorded-copy","reason":"Unreachable","since":"2026-11-29T11:00:00Z"}}`)}
			if err := f.client.Create(ctx, bb); err != nil {
				t.Fatal(err)
			}
			if rec, err := connect.FailoverOf(ctx, f.client, testBucket); err != nil || rec == nil {
				t.Fatalf("the fixture's record: %+v, %v", rec, err)
			}
			if err := f.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: copystore.CredentialsNamespace, Name: "ref-backup-copy"},
				Data: map[string][]byte{"key": []byte("the copy's")}}); err != nil {
				t.Fatal(err)
			}
			if err := f.mem.EnsureBucket(ctx, objectstore.Bucket{Name: sharedCopy}); err != nil {
				t.Fatal(err)
			}
			be := f.current()
			be.Spec.ProviderConfig = controllertest.RawConfig(controllertest.Config{CopyField: copystore.CopyField{Copy: c.copy}})
			if err := f.client.Update(ctx, be); err != nil {
				t.Fatal(err)
			}
			f.be = f.current()
			out, err := f.delegate().GetETCDSecretData(ctx, logr.Discard(), f.be, entryData)
			if !errors.Is(err, objectstore.ErrInvalidConfig) || !strings.Contains(err.Error(), c.saying) {
				t.Fatalf("etcd-backup %q, error %v; want the configuration error saying %q", out[v1beta1constants.DataKeyBackupBucketName], err, c.saying)
			}
		})
	}
}
