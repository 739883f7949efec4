// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package incumbent_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// halfWay is a seed after the switch's first steps (steps 1 and 2 of the flow): the incumbent
// made the bucket and entries a, b and c and deleted a; this extension's binary, with the
// operator's credentials alone, adopted the bucket, reconciled b and deleted c. b's sidecar
// writes on.
type halfWay struct {
	*seed

	provider, incumbent string
	bb                  *extensionsv1alpha1.BackupBucket
	beB                 *extensionsv1alpha1.BackupEntry
	scB                 *sidecar
	ext                 *stack.Extension
	// before are the objects when the incumbent had deleted a; etcdBackupB is b's etcd-backup as
	// the incumbent wrote it.
	before      []string
	etcdBackupB *corev1.Secret
	// checkForeign fails the test unless an operator's settings on the bucket (a foreigner world)
	// read as they were.
	checkForeign func(stage string)
	step         func(what string)
}

// newEntry is an entry of the bucket with the data gardenlet gives it, reconciled.
func (h *halfWay) newEntry(name string) *extensionsv1alpha1.BackupEntry {
	h.t.Helper()
	h.fw.EnsureNamespace(h.t, name[:strings.LastIndex(name, "--")])
	be := h.fw.CreateEntry(h.t, name, h.bucket, h.entryData(h.bb))
	h.fw.WaitFor(h.t, be, 2*time.Minute, "entry "+name+" reconciled", framework.Succeeded)
	return be
}

// noEntryHeld fails the test if an entry of the bucket still carries this extension's finalizer.
func (h *halfWay) noEntryHeld(stage string) {
	h.t.Helper()
	var entries extensionsv1alpha1.BackupEntryList
	if err := h.k8s.List(context.Background(), &entries); err != nil {
		h.t.Fatal(err)
	}
	for _, be := range entries.Items {
		if be.Spec.BucketName == h.bb.Name && slices.Contains(be.Finalizers, entryinfo.FinalizerName) {
			h.t.Fatalf("BackupEntry %s still carries %s %s: %v", be.Name, entryinfo.FinalizerName, stage, be.Finalizers)
		}
	}
}

// switchHalfWay plays steps 1 and 2 of the flow (see halfWay); a world with a gap skips the test
// after the takeover.
func switchHalfWay(t *testing.T, provider string, w world, dir string) *halfWay {
	ctx := context.Background()
	began := time.Now()
	step := func(what string) { t.Logf("%5.1fs %s", time.Since(began).Seconds(), what) }
	incumbent := incumbentBinary(t, provider)
	ours, err := stack.BuildBinary(dir, provider)
	if err != nil {
		t.Fatal(err)
	}
	step("binaries built")
	s := newSeed(t, w, dir)
	testEnv := s.env

	// 1. The incumbent owns the seed's backups.
	inc := s.startIncumbent(incumbent, provider)
	bb := s.fw.CreateBucket(t, framework.UniqueName("seed-"), s.data, w.incumbentConfig())
	s.bucket = bb.Name
	h := &halfWay{seed: s, provider: provider, incumbent: incumbent, bb: bb, step: step, checkForeign: func(string) {}}
	s.fw.WaitFor(t, bb, 2*time.Minute, "the incumbent's bucket reconciled", framework.Succeeded)
	w.incumbentMadeBucket(t, bb.Name, inc.Tail())
	beA, beB, beC := h.newEntry("shoot--p--a--1"), h.newEntry("shoot--p--b--1"), h.newEntry("shoot--p--c--1")
	h.beB = beB
	scA := s.snapshot(beA.Name)
	scA.stop()
	scC := s.snapshot(beC.Name)
	scC.stop()
	scB := s.snapshot(beB.Name) // runs through the whole switch
	t.Cleanup(scB.stop)
	h.scB = scB
	_, h.etcdBackupB = s.fw.SecretKeys(t, "shoot--p--b", "etcd-backup")
	step("the incumbent's bucket and three entries, with snapshots")
	s.fw.DeleteAndWaitGone(t, beA, 2*time.Minute)
	s.gone(beA.Name)
	w.incumbentDeferred(t, bb.Name, beA.Name)
	h.before = s.objects("")
	step("entry a deleted by the incumbent")

	// An operator's settings on the incumbent's bucket, once the incumbent's deletions are done
	// (provider-aws's deferral replaces the whole lifecycle with its rules, its doing): unchanged
	// by the takeover, the hand-back and the incumbent's reconcile after it.
	if f, ok := w.(foreigner); ok {
		f.addForeign(t, bb.Name)
		foreign := f.foreign(t, bb.Name)
		h.checkForeign = func(stage string) {
			t.Helper()
			if got := f.foreign(t, bb.Name); !slices.Equal(got, foreign) {
				t.Errorf("the operator's settings %s:\n%v\nwant them unchanged:\n%v", stage, got, foreign)
			}
		}
		step("an operator's settings added to the incumbent's bucket")
	}

	// 2. The switch: the incumbent's backup controllers off, ours on; the seed's providerConfig as it is.
	inc.Stop()
	// This extension's binary inherits the test's environment: a world whose entries' credentials
	// name the cloud's public hosts (azure's account-key secrets) gives it the same redirect.
	if e, ok := w.(interface{ extensionEnv() []string }); ok {
		for _, kv := range e.extensionEnv() {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
	}
	ext, err := stack.StartExtension(ctx, testEnv, ours, dir, w.extensionFlags()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ext.Stop)
	h.ext = ext
	since := time.Now()
	s.fw.Trigger(t, bb)
	s.fw.WaitFor(t, bb, 2*time.Minute, "our reconcile of the incumbent's bucket", framework.SucceededAfter(since))
	w.adopted(t, bb.Name, beA.Name)
	h.checkForeign("after the takeover")
	if after := s.objects(""); !isSubset(h.before, after) {
		t.Errorf("objects gone at the takeover: %v", missing(h.before, after))
	}
	since = time.Now()
	s.fw.Trigger(t, beB)
	s.fw.WaitFor(t, beB, 2*time.Minute, "our reconcile of the incumbent's entry", framework.SucceededAfter(since))
	h.keptEtcdBackupB("by this extension's reconcile")
	deltas := s.count(beB.Name, "Incr-")
	scB.db.Put(t, "/registry/after-takeover", "2")
	s.waitSnapshots(scB, beB.Name, "Incr-", deltas+1)
	step("taken over: adopted, converged, every object kept, etcd-backup kept, the sidecar writes on")
	if g, ok := w.(interface{ gap() string }); ok {
		t.Skipf("the rest of the flow needs what the stand-ins do not play yet: %s", g.gap())
	}
	s.fw.DeleteAndWaitGone(t, beC, 2*time.Minute)
	s.gone(beC.Name)
	w.weDeferred(t, bb.Name, beC.Name)
	step("entry c deleted by this extension")
	return h
}

// keptEtcdBackupB fails the test if b's etcd-backup has a key the incumbent did not write or one
// whose value changed.
func (h *halfWay) keptEtcdBackupB(by string) {
	h.t.Helper()
	_, now := h.fw.SecretKeys(h.t, "shoot--p--b", "etcd-backup")
	for k, v := range now.Data {
		if old, ok := h.etcdBackupB.Data[k]; !ok || string(old) != string(v) {
			h.t.Errorf("etcd-backup of b: key %s is new or changed %s (the incumbent wrote keys %v)", k, by, slices.Sorted(maps.Keys(h.etcdBackupB.Data)))
		}
	}
}
