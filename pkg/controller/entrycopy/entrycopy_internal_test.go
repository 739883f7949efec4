// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"context"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/periodic"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// TestCopyPass: an entry's snapshots are copied to the copy bucket (and nothing else: neither
// a key that is no snapshot nor a neighbour's), BackupsCopied True and the lag metric 0; without
// the copy's credentials the copy store cannot be read: Unknown CopyUnavailable and no lag series.
func TestCopyPass(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	name := "shoot--p--s--1"
	snaps := []string{name + "/etcd-main/v2/Full-00000000-00000010-1764417600", name + "/etcd-main/v2/Incr-00000011-00000020-1764417900"}
	mem := controllertest.Bucket(t, "bucket", append(snaps, name+"/etcd-main/v2/not-a-snapshot", "shoot--p--s--10/etcd-main/v2/Full-00000000-00000010-1764417600")...)
	if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket-copy"}); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = extensionsv1alpha1.AddToScheme(scheme)
	cfg := controllertest.Config{CopyField: copystore.CopyField{Copy: &copystore.Settings{CredentialsRef: "backup-copy"}}}
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem", ProviderConfig: controllertest.RawConfig(cfg)},
			BucketName: "bucket", SecretRef: controllertest.SecretRef},
		Status: extensionsv1alpha1.BackupEntryStatus{DefaultStatus: extensionsv1alpha1.DefaultStatus{
			LastOperation: &gardencorev1beta1.LastOperation{State: gardencorev1beta1.LastOperationStateSucceeded}}},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllertest.SecretRef.Namespace, Name: controllertest.SecretRef.Name}, Data: map[string][]byte{"key": []byte("k")}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(be, secret).WithStatusSubresource(be).Build()
	clock := clocktesting.NewFakeClock(now)
	cp := &copier{Deps: periodic.Deps{Provider: provider.Register(controllertest.Provider{Store: mem}), Reader: c, Client: c, Recorder: events.NewFakeRecorder(20), Clock: clock, Started: now.Add(-2 * time.Hour)},
		opts: Options{Interval: time.Minute}}
	metrics.ForgetEntryCopy(name)
	t.Cleanup(func() { metrics.ForgetEntryCopy(name) })
	pass := func() *gardencorev1beta1.Condition {
		t.Helper()
		clock.Step(2 * time.Minute) // past the entry's slot and its interval
		if _, err := cp.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: name}}); err != nil {
			t.Fatal(err)
		}
		got := &extensionsv1alpha1.BackupEntry{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			t.Fatal(err)
		}
		return v1beta1helper.GetCondition(got.Status.Conditions, ConditionBackupsCopied)
	}

	if cond := pass(); cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != ReasonCopyUnavailable || !strings.Contains(cond.Message, "ref-backup-copy") {
		t.Fatalf("without the copy's credentials: %v; want Unknown CopyUnavailable naming the secret", cond)
	}
	if n := testutil.CollectAndCount(metrics.EntryCopyLag); n != 0 {
		t.Fatalf("%d lag series while the copy cannot be read; want none", n)
	}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}}); err != nil {
		t.Fatal(err)
	}
	if cond := pass(); cond == nil || cond.Status != gardencorev1beta1.ConditionTrue || cond.Reason != ReasonCopied {
		t.Fatalf("with the copy's credentials: %v; want True Copied", cond)
	}
	var keys []string
	if err := mem.ListObjects(ctx, "bucket-copy", "", func(page []objectstore.ObjectVersion) error {
		for _, o := range page {
			keys = append(keys, o.Key)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, ",") != strings.Join(snaps, ",") {
		t.Fatalf("the copy holds %v; want exactly the entry's snapshots %v", keys, snaps)
	}
	if lag := testutil.ToFloat64(metrics.EntryCopyLag.WithLabelValues(name, "bucket", "bucket-copy")); lag != 0 {
		t.Fatalf("lag %v; want 0", lag)
	}
	if n := testutil.ToFloat64(metrics.EntryCopyObjects.WithLabelValues(name)); n != 2 {
		t.Fatalf("copied objects %v; want 2", n)
	}
}
