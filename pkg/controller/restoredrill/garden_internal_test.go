// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"fmt"
	"testing"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	operatorv1alpha1 "github.com/gardener/gardener/pkg/apis/operator/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
)

// TestDrillReadsTheGardensPrefix: the garden's entry (gardener-operator's garden--<Garden UID>,
// class garden) is drilled where its virtual garden's etcd writes: <path>/virtual-garden-etcd-main/
// from the Garden's bucketName; the prefix is recorded in the drill's status. Nothing under the
// entry's own name is looked for.
func TestDrillReadsTheGardensPrefix(t *testing.T) {
	bucketName := bucket + "/landscape"
	garden := &operatorv1alpha1.Garden{ObjectMeta: metav1.ObjectMeta{Name: "garden", UID: "g-uid"}}
	garden.Spec.VirtualCluster.ETCD = &operatorv1alpha1.ETCD{Main: &operatorv1alpha1.ETCDMain{Backup: &operatorv1alpha1.Backup{Provider: "mem", BucketName: &bucketName}}}
	f := newFixture(t, garden)
	prefix := "landscape/" + operatorv1alpha1.VirtualGardenETCDMain + "/"
	put := func(kind string, start, last int64) string {
		f.unix += 10
		key := fmt.Sprintf("%setcd-main/v2/%s-%08d-%08d-%d", prefix, kind, start, last, f.unix)
		data := withHash([]byte("[]"))
		if kind == drill.KindFull {
			data = withHash(make([]byte, 512))
		}
		f.putRaw(key, data)
		return key
	}
	full := put(drill.KindFull, 0, 10)
	put(drill.KindDelta, 11, 20)
	be := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: v1beta1constants.GardenNamespace + "--" + string(garden.UID)},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "mem", Class: new(extensionsv1alpha1.ExtensionClassGarden)},
			BucketName: bucket, SecretRef: controllertest.SecretRef}}
	if err := f.client.Create(context.Background(), be); err != nil { // the drill marks it (markStarted)
		t.Fatal(err)
	}
	st, err := f.r.driller().drill(context.Background(), be, f.r.driller().primaryOf(be), entryStatus{f.r, primarySide})
	if err != nil {
		t.Fatal(err)
	}
	if st.Prefix != prefix || st.Error != "" || len(st.Etcds) != 1 {
		t.Fatalf("drill status %+v; want one etcd drilled under %s", st, prefix)
	}
	if e := st.Etcds[0]; e.Name != "etcd-main" || e.Restorable != "True" || e.FullSnapshot != full || e.Revision != 20 {
		t.Fatalf("etcd-main %+v; want restored from %s to revision 20", e, full)
	}
}
