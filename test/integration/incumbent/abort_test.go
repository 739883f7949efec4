// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package incumbent_test

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/backupbucket"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
)

// TestAbortAfterAHalfWaySwitch plays docs/runbook.md, "Abort", to the end with the incumbent's
// real code, on a seed where the switch ran this extension with the operator's credentials and
// the incumbent's controllers off (switchHalfWay, plus an entry e this extension made):
//
//   - Abort step 1: this extension ran (condition BucketAvailable, its finalizer on the entries).
//   - Abort step 2 = Hand back steps 1-3: handBack: true in the seed configuration (the Extension
//     garden/backup-<provider>; the BackupBucket's providerConfig stays in the incumbent's form),
//     the Extension Succeeded, condition HandBack True (HandedBack) with the bucket succeeding.
//   - Abort step 3 = Hand back steps 4-6: this extension's controllers stop, its finalizer is on no
//     entry; the seed configuration is removed (its Extension deleted; with this extension's
//     controllers off its finalizer on the Extension is removed by hand, see the notes of issue
//     43); the incumbent's controllers start and reconcile the bucket and every entry to
//     Succeeded.
//
// Then the sidecar writes on, and an entry deleted after the abort is deleted by the incumbent.
// Nothing is lost: every object, every entry's etcd-backup (every key and value), the
// operator's settings on the bucket. The harness has no Etcd resources (envtest carries
// gardener's extension CRDs, not etcd-druid's): that no Etcd spec changes is not checked here.
//
// aws and gcp: the incumbents built here (azure's and openstack's cannot be, notServed).
func TestAbortAfterAHalfWaySwitch(t *testing.T) {
	for _, inc := range incumbents {
		if inc.provider != "aws" && inc.provider != "gcp" {
			continue
		}
		t.Run(inc.provider, func(t *testing.T) {
			dir := t.TempDir()
			w := inc.start(t, dir)
			abortToTheEnd(t, switchHalfWay(t, inc.provider, w, dir), w)
		})
	}
}

// seedHandBack is the seed configuration of the abort's hand-back (docs/migrating.md: this
// extension's apiVersion, in the Seed's spec.extensions entry of type backup-<provider>).
func seedHandBack(provider string) string {
	return `{"apiVersion":"` + provider + `.backup.extensions.gardener.cloud/v1alpha1","kind":"BackupBucketConfig","handBack":true}`
}

func abortToTheEnd(t *testing.T, h *halfWay, w world) {
	ctx := context.Background()
	s, bb := h.seed, h.bb
	beE := h.newEntry("shoot--p--e--1") // made by this extension
	scE := s.snapshot(beE.Name)
	scE.stop()
	h.step("entry e made by this extension, with a snapshot")

	// Abort step 1: did this extension run?
	if err := s.k8s.Get(ctx, client.ObjectKeyFromObject(bb), bb); err != nil {
		t.Fatal(err)
	}
	if v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionBucketAvailable) == nil {
		t.Fatalf("no condition %s on the bucket this extension reconciled", backupbucket.ConditionBucketAvailable)
	}
	entries := h.entries()
	if len(entries) != 2 {
		t.Fatalf("entries of the bucket before the abort: %v; want b and e", entryNames(entries))
	}
	etcdBackup := map[string]map[string][]byte{}
	for _, be := range entries {
		if !slices.Contains(be.Finalizers, entryinfo.FinalizerName) {
			t.Fatalf("entry %s does not carry %s before the abort: %v", be.Name, entryinfo.FinalizerName, be.Finalizers)
		}
		_, secret := s.fw.SecretKeys(t, shootOf(be.Name), "etcd-backup")
		etcdBackup[be.Name] = secret.Data
	}
	before := s.objects("")

	// Abort step 2 = Hand back 1-3: handBack in the seed configuration; wait for HandBack=True.
	s.fw.EnsureNamespace(t, "garden")
	ex := &extensionsv1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "backup-" + h.provider},
		Spec: extensionsv1alpha1.ExtensionSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "backup-" + h.provider, Class: seedClass(),
			ProviderConfig: &runtime.RawExtension{Raw: []byte(seedHandBack(h.provider))}}}}
	if err := s.k8s.Create(ctx, ex); err != nil {
		t.Fatal(err)
	}
	s.fw.WaitFor(t, ex, time.Minute, "the seed configuration applied (the Extension Succeeded)", framework.Succeeded)
	s.fw.WaitFor(t, bb, 3*time.Minute, "condition HandBack True, the bucket succeeding", framework.HandBackIs(backupbucket.ReasonHandedBack))
	if c := v1beta1helper.GetCondition(bb.Status.Conditions, backupbucket.ConditionHandBack); c.Status != gardencorev1beta1.ConditionTrue {
		t.Fatalf("condition HandBack %s %s: %s; want True", c.Status, c.Reason, c.Message)
	}
	w.handedBack(t, bb.Name)
	h.checkForeign("after the abort's hand-back")
	h.step("handed back: HandBack=True")

	// Abort step 3 = Hand back 4: this extension's controllers off; its finalizer on no entry.
	h.ext.Stop()
	h.noEntryHeld("once HandBack is True")
	// Hand back 5: the seed configuration removed (gardenlet deletes the Extension). Nobody
	// removes this extension's finalizer from it now: the operator does, as the notes say.
	if err := s.k8s.Delete(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if err := s.k8s.Get(ctx, client.ObjectKeyFromObject(ex), ex); err != nil {
		t.Fatalf("the Extension after its deletion: %v; want it held by this extension's finalizer", err)
	}
	ours := slices.IndexFunc(ex.Finalizers, func(f string) bool { return strings.HasSuffix(f, "gardener-extension-backup-"+h.provider) })
	if ours < 0 {
		t.Fatalf("the deleted Extension carries finalizers %v; want this extension's", ex.Finalizers)
	}
	patch := client.MergeFrom(ex.DeepCopy())
	ex.Finalizers = slices.Delete(ex.Finalizers, ours, ours+1)
	if err := s.k8s.Patch(ctx, ex, patch); err != nil {
		t.Fatal(err)
	}
	if err := s.k8s.Get(ctx, client.ObjectKeyFromObject(ex), ex); !apierrors.IsNotFound(err) {
		t.Fatalf("the Extension without this extension's finalizer: %v; want it gone (finalizers %v)", err, ex.Finalizers)
	}
	// Hand back 6: the incumbent on; the bucket and every entry reconciled by it.
	inc := s.startIncumbent(h.incumbent, h.provider)
	t.Cleanup(inc.Stop)
	since := time.Now()
	s.fw.Trigger(t, bb)
	s.fw.WaitFor(t, bb, 2*time.Minute, "the incumbent's reconcile of the bucket after the abort", framework.SucceededAfter(since))
	for _, be := range entries {
		since := time.Now()
		s.fw.Trigger(t, &be)
		s.fw.WaitFor(t, &be, 2*time.Minute, "the incumbent's reconcile of entry "+be.Name+" after the abort", framework.SucceededAfter(since))
		_, secret := s.fw.SecretKeys(t, shootOf(be.Name), "etcd-backup")
		if !maps.EqualFunc(secret.Data, etcdBackup[be.Name], bytes.Equal) {
			t.Errorf("etcd-backup of %s after the incumbent's reconcile: keys %v, values changed or keys gone; before the abort: keys %v", be.Name, slices.Sorted(maps.Keys(secret.Data)), slices.Sorted(maps.Keys(etcdBackup[be.Name])))
		}
	}
	h.keptEtcdBackupB("after the abort")
	h.checkForeign("after the incumbent's reconcile after the abort")
	if after := s.objects(""); !isSubset(before, after) {
		t.Errorf("objects gone by the abort: %v", missing(before, after))
	}
	h.step("the incumbent reconciled the bucket and every entry; nothing lost")

	// The sidecar writes on; an entry deleted now is the incumbent's to delete.
	deltas := s.count(h.beB.Name, "Incr-")
	h.scB.db.Put(t, "/registry/after-abort", "3")
	s.waitSnapshots(h.scB, h.beB.Name, "Incr-", deltas+1)
	s.fw.DeleteAndWaitGone(t, beE, 2*time.Minute)
	s.gone(beE.Name)
	w.incumbentDeferred(t, bb.Name, beE.Name)
	if left := s.objects(""); w.defers() && !isSubset(before, left) {
		t.Errorf("objects gone, though under retention: %v", missing(before, left))
	}
	h.step("the sidecar writes on; entry e deleted by the incumbent")
}

// entries are the seed's BackupEntries of the bucket.
func (h *halfWay) entries() []extensionsv1alpha1.BackupEntry {
	h.t.Helper()
	var list extensionsv1alpha1.BackupEntryList
	if err := h.k8s.List(context.Background(), &list); err != nil {
		h.t.Fatal(err)
	}
	return slices.DeleteFunc(list.Items, func(be extensionsv1alpha1.BackupEntry) bool { return be.Spec.BucketName != h.bb.Name })
}

func entryNames(entries []extensionsv1alpha1.BackupEntry) []string {
	var out []string
	for _, be := range entries {
		out = append(out, be.Name)
	}
	return out
}

// shootOf is the shoot's technical ID (namespace) of an entry name <technical ID>--<uid>.
func shootOf(entry string) string { return entry[:strings.LastIndex(entry, "--")] }
