// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"context"
	"strings"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
)

// TestServingFromTheCopy: while copy.serve is copy, the shoot's Etcd names the copy bucket and
// its etcd-backup holds the copy's credentials, the shoot writes the copy bucket itself: nothing
// is listed or copied, BackupsCopied is Unknown ServingFromCopy (there is no second copy), and no
// lag series stays. Until both (the switch pending: etcd-backup not yet naming the copy, the Etcd
// not yet rolled onto it, or etcd-backup not yet holding the copy's credentials) the shoot still
// writes the primary: the copy goes on and BackupsCopied says the switch is pending.
func TestServingFromTheCopy(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	name := "shoot--p--f--1"
	store := memstore.WithFaults(controllertest.Bucket(t, "bucket", name+"/etcd-main/v2/Full-00000000-00000010-1764417600"))
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket-copy"}); err != nil {
		t.Fatal(err)
	}
	settings := &copystore.Settings{CredentialsRef: "backup-copy"}
	rig := newCopyRig(t, store, name, controllertest.Config{CopyField: copystore.CopyField{Copy: settings}}, now)
	if err := rig.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}, Data: map[string][]byte{"key": []byte("the copy's")}}); err != nil {
		t.Fatal(err)
	}
	if cond := rig.pass(); cond == nil || cond.Reason != ReasonCopied {
		t.Fatalf("serving the primary: %v; want True Copied", cond)
	}
	reads, writes := store.Calls(memstore.OpListObjects), store.Calls(memstore.OpPutObject)

	settings.Serve = copystore.ServeCopy
	rig.setConfig(t, controllertest.Config{CopyField: copystore.CopyField{Copy: settings}})
	etcdBackup := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--f", Name: "etcd-backup"},
		Data: map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte("bucket"), "key": []byte("k")}}
	for _, step := range []string{"no etcd-backup", "etcd-backup names the primary"} {
		if step == "etcd-backup names the primary" {
			if err := rig.c.Create(ctx, etcdBackup); err != nil {
				t.Fatal(err)
			}
		}
		if cond := rig.pass(); cond == nil || cond.Reason != ReasonCopied || !strings.Contains(cond.Message, "switch is pending") {
			t.Fatalf("serving the copy, %s: %v; want True Copied saying the switch is pending", step, cond)
		}
		if store.Calls(memstore.OpListObjects) == reads {
			t.Fatalf("serving the copy, %s: nothing listed; want the copy to go on", step)
		}
		reads, writes = store.Calls(memstore.OpListObjects), store.Calls(memstore.OpPutObject)
	}

	// The two-phase switch: etcd-backup names the copy but keeps the primary's credentials while
	// the Etcd names the primary; then gardenlet rolls the Etcd onto the copy; only once
	// etcd-backup holds the copy's credentials too does the shoot write the copy.
	etcd := &druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--f", Name: "etcd-main"},
		Spec: druidcorev1alpha1.EtcdSpec{Backup: druidcorev1alpha1.BackupSpec{Store: &druidcorev1alpha1.StoreSpec{Container: new("bucket")}}}}
	if err := rig.c.Create(ctx, etcd); err != nil {
		t.Fatal(err)
	}
	etcdBackup.Data[v1beta1constants.DataKeyBackupBucketName] = []byte("bucket-copy")
	if err := rig.c.Update(ctx, etcdBackup); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"etcd-backup names the copy, the Etcd the primary", "the Etcd names the copy, etcd-backup holds the primary's credentials"} {
		if step != "etcd-backup names the copy, the Etcd the primary" {
			etcd.Spec.Backup.Store.Container = new("bucket-copy")
			if err := rig.c.Update(ctx, etcd); err != nil {
				t.Fatal(err)
			}
		}
		if cond := rig.pass(); cond == nil || cond.Reason != ReasonCopied || !strings.Contains(cond.Message, "switch is pending") {
			t.Fatalf("serving the copy, %s: %v; want True Copied saying the switch is pending", step, cond)
		}
		reads, writes = store.Calls(memstore.OpListObjects), store.Calls(memstore.OpPutObject)
	}
	etcdBackup.Data["key"] = []byte("the copy's")
	if err := rig.c.Update(ctx, etcdBackup); err != nil {
		t.Fatal(err)
	}
	cond := rig.pass()
	t.Logf("cond %+v", cond)
	if cond == nil || cond.Status != gardencorev1beta1.ConditionUnknown || cond.Reason != ReasonServingFromCopy {
		t.Fatalf("serving the copy: %v; want Unknown ServingFromCopy", cond)
	}
	if n, w := store.Calls(memstore.OpListObjects)-reads, store.Calls(memstore.OpPutObject)-writes; n != 0 || w != 0 {
		t.Fatalf("%d listings, %d writes while serving the copy; want none", n, w)
	}
	if n := testutil.CollectAndCount(metrics.EntryCopyLag); n != 0 {
		t.Fatalf("%d lag series while serving the copy; want none", n)
	}
}
