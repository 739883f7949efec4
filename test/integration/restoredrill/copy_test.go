// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycopy"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	awsstack "github.com/gardener-extension-backup/gardener-extension-backup/test/stack/aws"
)

// TestBinaryDrillsTheCopy: the copy a bucket's `copy:` declares lives on a second MinIO with root
// credentials of its own (ref-backup-copy in the garden namespace). The core controllers copy the
// real etcd-backup-restore's snapshots there; the drill process, under the chart's restore-drill
// ServiceAccount, drills the copy with the copy's credentials: CopyRestorable True at the
// revision etcd held. A byte flipped in a delta in the copy only (the copy pass never overwrites
// it: not older) turns CopyRestorable False HashMismatch while BackupsRestorable stays True, and
// the metrics tell the stores apart. The copy no longer declared removes CopyRestorable, the
// copy's drill status and series.
func TestBinaryDrillsTheCopy(t *testing.T) {
	ctx := context.Background()
	scratch := t.TempDir()
	second, err := awsstack.StartMinIO(ctx, awsstack.MinIOOptions{Region: region})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Stop)
	s := startDrillStack(t, ctx, t.TempDir(), "--controllers=core", "--entry-inventory-interval", "0s", "--entry-copy-interval", "2s")
	if s.minio.SecretKey == second.SecretKey {
		t.Fatal("both servers have the same root credentials")
	}
	bin, env := s.bin, s.env
	env.CreateSecret(t, "garden", "ref-backup-copy", second.SecretData())
	ext := startDrillAsTheChart(t, ctx, bin, "--restore-drill-interval", "3s", "--restore-drill-scratch-dir", scratch, "--restore-drill-read-rate", "0")

	config := strings.TrimSuffix(minioConfig, "}") + `,"copy":{"credentialsRef":"backup-copy","rpo":"15m","providerConfig":` + minioConfig + `}}`
	bb := env.CreateBucket(t, framework.UniqueName("drillcopy-"), s.data, config)
	env.WaitFor(t, bb, 2*time.Minute, "bucket reconciled", framework.Succeeded)
	copyBucket := bb.Name + "-copy"
	entry := framework.UniqueName("shoot--drillcopy--") + "--1"
	env.EnsureNamespace(t, strings.TrimSuffix(entry, "--1"))
	be := env.CreateEntryWithConfig(t, entry, bb.Name, s.data, config)
	env.WaitFor(t, be, time.Minute, "entry reconciled", framework.Succeeded)

	store := env.StoreFor(t, s.data)
	_, rev := backUp(t, ctx, store, s.backupSecret(bb.Name), bb.Name, entry)
	copyStore := env.StoreFor(t, second.SecretData())

	env.WaitFor(t, be, 3*time.Minute, "CopyRestorable True at the last revision", func(obj extensionsv1alpha1.Object) bool {
		ps, err := entryinfo.ReadProviderStatus(obj.(*extensionsv1alpha1.BackupEntry))
		return copyRestorable(gardencorev1beta1.ConditionTrue, restoredrill.ReasonRestored)(obj) && err == nil && ps.CopyDrill != nil &&
			len(ps.CopyDrill.Etcds) == 1 && ps.CopyDrill.Etcds[0].Revision == rev
	})
	ps, _ := entryinfo.ReadProviderStatus(be)
	if ps.CopyDrill.Bucket != copyBucket || ps.CopyDrill.Etcds[0].BytesRead == 0 {
		t.Errorf("the copy's drill %+v; want of %s, bytes read", ps.CopyDrill, copyBucket)
	}
	t.Logf("copy drilled: %s", v1beta1helper.GetCondition(be.Status.Conditions, restoredrill.ConditionCopyRestorable).Message)
	if !env.EventuallyHasEvent(t, entry, restoredrill.EventCopyRestorable, "restored to revision", 30*time.Second) {
		t.Error("no CopyRestorable event")
	}

	// A byte flipped in a delta in the copy only.
	var delta string
	for _, o := range framework.ListAll(t, ctx, copyStore, copyBucket) {
		if s, ok := drill.ParseKey(entry+"/", o.Key); ok && s.Kind == drill.KindDelta {
			delta = o.Key
		}
	}
	content, err := objectstore.ReadObject(framework.Ctx(t), copyStore, copyBucket, delta)
	if err != nil {
		t.Fatal(err)
	}
	content[len(content)/2] ^= 0x01
	if err := copyStore.PutObject(framework.Ctx(t), copyBucket, delta, content); err != nil {
		t.Fatal(err)
	}
	env.WaitFor(t, be, time.Minute, "CopyRestorable False", copyRestorable(gardencorev1beta1.ConditionFalse, string(drill.ReasonHashMismatch)))
	if c := v1beta1helper.GetCondition(be.Status.Conditions, restoredrill.ConditionCopyRestorable); !strings.Contains(c.Message, delta) || !strings.Contains(c.Message, copyBucket) {
		t.Errorf("CopyRestorable %q does not name the damaged delta %s in %s", c.Message, delta, copyBucket)
	}
	// The primary's next drill after the damage: still restorable.
	damaged := time.Now()
	env.WaitFor(t, be, time.Minute, "BackupsRestorable True after the copy's damage", func(obj extensionsv1alpha1.Object) bool {
		ps, err := entryinfo.ReadProviderStatus(obj.(*extensionsv1alpha1.BackupEntry))
		return restorable(gardencorev1beta1.ConditionTrue, restoredrill.ReasonRestored)(obj) && err == nil && ps.Drill != nil && ps.Drill.DrilledAt.After(damaged)
	})
	if c := v1beta1helper.GetCondition(be.Status.Conditions, entrycopy.ConditionBackupsCopied); c == nil || c.Reason != entrycopy.ReasonCopyConflict {
		t.Logf("BackupsCopied %v (the damaged copy is a conflict, never overwritten)", c)
	}
	m := framework.ScrapeMetrics(t, ext.MetricsURL)
	for store, want := range map[string]float64{"copy": 0, "primary": 1} {
		if got := m.Get("gardener_backup_entry_restorable", map[string]string{"entry": entry, "etcd": "etcd-main", "store": store}); len(got) != 1 || got[0].Value != want {
			t.Errorf("gardener_backup_entry_restorable{store=%q} of %s: %v; want one series at %v", store, entry, got, want)
		}
	}

	// No copy declared any more.
	if err := env.K8s.Get(ctx, client.ObjectKeyFromObject(be), be); err != nil {
		t.Fatal(err)
	}
	be.Spec.ProviderConfig = &runtime.RawExtension{Raw: []byte(minioConfig)}
	if err := env.K8s.Update(ctx, be); err != nil {
		t.Fatal(err)
	}
	env.WaitFor(t, be, time.Minute, "CopyRestorable removed", func(obj extensionsv1alpha1.Object) bool {
		ps, err := entryinfo.ReadProviderStatus(obj.(*extensionsv1alpha1.BackupEntry))
		return v1beta1helper.GetCondition(obj.GetExtensionStatus().GetConditions(), restoredrill.ConditionCopyRestorable) == nil && err == nil && ps.CopyDrill == nil
	})
	if got := framework.ScrapeMetrics(t, ext.MetricsURL).Get("gardener_backup_entry_restorable", map[string]string{"entry": entry, "store": "copy"}); len(got) != 0 {
		t.Errorf("the copy's series left after the copy was no longer declared: %v", got)
	}
}

func copyRestorable(status gardencorev1beta1.ConditionStatus, reason string) func(extensionsv1alpha1.Object) bool {
	return func(obj extensionsv1alpha1.Object) bool {
		c := v1beta1helper.GetCondition(obj.(*extensionsv1alpha1.BackupEntry).Status.Conditions, restoredrill.ConditionCopyRestorable)
		return c != nil && c.Status == status && c.Reason == reason
	}
}
