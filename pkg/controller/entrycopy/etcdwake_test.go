// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy_test

import (
	"context"
	"slices"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/app"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycopy"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestEtcdRollWakesTheFinalPass: the entry copy alone (no BackupEntry controller, whose reconcile
// would wake it by the entry's last operation), on a real API server, copy.interval 1h. Coming
// back, the shoot's etcd-backup names the primary and the shoot still writes the copy; what it
// writes there after the catch-up reaches the primary as soon as gardenlet rolls the Etcd onto
// the primary (the Etcd watch wakes the look: the final reverse pass), not an hour later.
func TestEtcdRollWakesTheFinalPass(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kube-apiserver")
	}
	logf.SetLogger(logr.Discard())
	env, cfg, err := stack.StartEnvtest()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	scheme, err := app.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	name, shoot := "shoot--p--w--1", "shoot--p--w"
	full, late := name+"/etcd-main/v2/Full-00000000-00000010-1764417600", name+"/etcd-main/v2/Incr-00000011-00000020-1764417900"
	mem := controllertest.Bucket(t, "bucket", full)
	if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket-copy"}); err != nil {
		t.Fatal(err)
	}
	if err := mem.PutObject(ctx, "bucket-copy", full, []byte("data of "+full)); err != nil {
		t.Fatal(err)
	}
	settings := &copystore.Settings{CredentialsRef: "backup-copy", Serve: copystore.ServePrimary, Interval: &metav1.Duration{Duration: time.Hour}, RPO: &metav1.Duration{Duration: time.Hour}}
	create := func(objs ...client.Object) {
		t.Helper()
		for _, o := range objs {
			if err := k8s.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	etcdBackup := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: shoot, Name: v1beta1constants.BackupSecretName},
		Data: map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte("bucket"), "key": []byte("the copy's")}}
	etcd := &druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: shoot, Name: v1beta1constants.ETCDMain},
		Spec: druidcorev1alpha1.EtcdSpec{Replicas: 1, Labels: map[string]string{"app": "etcd-statefulset"},
			Backup: druidcorev1alpha1.BackupSpec{Store: &druidcorev1alpha1.StoreSpec{Container: new("bucket-copy"), Prefix: name + "/etcd-main"}}}}
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem",
			ProviderConfig: controllertest.RawConfig(controllertest.Config{CopyField: copystore.CopyField{Copy: settings}})},
			BucketName: "bucket", Region: "local", SecretRef: controllertest.SecretRef}}
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shoot}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: controllertest.SecretRef.Name}, Data: map[string][]byte{"key": []byte("value")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}, Data: map[string][]byte{"key": []byte("the copy's")}},
		etcdBackup, etcd, be)
	// Copied back: the entry's reconcile named the primary; the shoot writes the copy until the roll.
	now := metav1.Now()
	be.Status.LastOperation = &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile, State: gardencorev1beta1.LastOperationStateSucceeded, LastUpdateTime: now}
	be.Status.Conditions = []gardencorev1beta1.Condition{{Type: entrycopy.ConditionBackupsCopied, Status: gardencorev1beta1.ConditionTrue, Reason: entrycopy.ReasonCopiedBack,
		Message: "copied back", LastTransitionTime: now, LastUpdateTime: now}}
	if err := k8s.Status().Update(ctx, be); err != nil {
		t.Fatal(err)
	}

	mgr, err := manager.New(cfg, manager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{&druidcorev1alpha1.Etcd{}: {Transform: app.EtcdStoreOnly}}}})
	if err != nil {
		t.Fatal(err)
	}
	p := provider.Register(controllertest.Provider{Store: mem})
	opts := options.AddOptions{Controller: ctrlcontroller.Options{SkipNameValidation: new(true)}}
	if err := periodic.Add(mgr, p, opts, entrycopy.Controller(entrycopy.Options{Interval: time.Hour})); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	condition := func() *gardencorev1beta1.Condition {
		t.Helper()
		cur := &extensionsv1alpha1.BackupEntry{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, cur); err != nil {
			t.Fatal(err)
		}
		return v1beta1helper.GetCondition(cur.Status.Conditions, entrycopy.ConditionBackupsCopied)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within a minute; BackupsCopied %+v", what, condition())
			}
		}
	}
	// The start's look catches up (nothing to copy); the next is an hour away.
	waitFor("the catch-up at the start", func() bool {
		c := condition()
		return c != nil && c.Reason == entrycopy.ReasonCopiedBack && c.Message != "copied back"
	})

	// The shoot writes a delta into the copy; then gardenlet rolls the Etcd onto the primary and
	// the entry's reconcile gives etcd-backup the primary's credentials (played here).
	if err := mem.PutObject(ctx, "bucket-copy", late, []byte("late")); err != nil {
		t.Fatal(err)
	}
	etcdBackup.Data["key"] = []byte("value")
	if err := k8s.Update(ctx, etcdBackup); err != nil {
		t.Fatal(err)
	}
	etcd.Spec.Backup.Store.Container = new("bucket")
	if err := k8s.Update(ctx, etcd); err != nil {
		t.Fatal(err)
	}
	waitFor("the final reverse pass after the roll, then the forward pass", func() bool {
		c := condition()
		return c != nil && c.Reason == entrycopy.ReasonCopied
	})
	got, err := conformance.ListKeys(ctx, mem, "bucket", name+"/")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, late) {
		t.Fatalf("the primary holds %v; want %q, written into the copy before the roll", got, late)
	}
}
