// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/rehearsal"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/integration/framework"
	"github.com/gardener-extension-backup/gardener-extension-backup/test/stack"
)

// TestRehearsalDrillsWriteNothing: the aws binary with --rehearse --rehearsal-restore-drills, on
// envtest and MinIO, drills two entries whose snapshots the real etcd-backup-restore took (the
// second's copy with a byte of a delta flipped): its report says BackupsRestorable True for the
// first and False (HashMismatch) for the second, and neither entry is written (resourceVersion).
func TestRehearsalDrillsWriteNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// The entries are first reconciled by the binary itself, in the incumbent's place, drills off.
	s := startDrillStack(t, ctx, dir, "--entry-inventory-interval", "0s", "--restore-drill-interval", "0s")
	bin, env, data := s.bin, s.env, s.data
	bb := s.bucket(t, "rehearse-")
	good, bad := framework.UniqueName("shoot--good--")+"--1", framework.UniqueName("shoot--bad--")+"--1"
	entries := map[string]*extensionsv1alpha1.BackupEntry{}
	for _, name := range []string{good, bad} {
		entries[name] = s.entry(t, name, bb.Name)
	}
	bin.Ext.Stop()

	store := env.StoreFor(t, data)
	secret := s.backupSecret(bb.Name)
	_, rev := backUp(t, ctx, store, secret, bb.Name, good)
	// The bad entry's chain: the good one's, with a byte of its last delta flipped.
	var lastDelta string
	for _, o := range framework.ListAll(t, ctx, store, bb.Name) {
		if s, ok := drill.ParseKey(good+"/", o.Key); ok && s.Kind == drill.KindDelta {
			lastDelta = o.Key
		}
	}
	for _, o := range framework.ListAll(t, ctx, store, bb.Name) {
		if !strings.HasPrefix(o.Key, good+"/") {
			continue
		}
		content, err := objectstore.ReadObject(framework.Ctx(t), store, bb.Name, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		if o.Key == lastDelta {
			content[len(content)/2] ^= 0x01
		}
		if err := store.PutObject(framework.Ctx(t), bb.Name, bad+strings.TrimPrefix(o.Key, good), content); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string]string{}
	for name := range entries {
		be := &extensionsv1alpha1.BackupEntry{}
		if err := env.K8s.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
			t.Fatal(err)
		}
		before[name] = be.ResourceVersion
	}

	scratch := t.TempDir()
	rehearsing, err := stack.StartExtension(ctx, bin.TestEnv, bin.Path, t.TempDir(), "--rehearse", "--rehearsal-interval=1h",
		"--rehearsal-restore-drills", "--restore-drill-scratch-dir", scratch, "--restore-drill-read-rate", "0")
	if err != nil {
		t.Fatal(err)
	}
	defer rehearsing.Stop()

	p := waitForReport(t, env.K8s, good, bad)
	for name, want := range map[string][2]string{
		good: {string(gardencorev1beta1.ConditionTrue), restoredrill.ReasonRestored},
		bad:  {string(gardencorev1beta1.ConditionFalse), string(drill.ReasonHashMismatch)},
	} {
		c := restorableCheck(p, name)
		if c == nil || string(c.Status) != want[0] || c.Reason != want[1] {
			t.Errorf("entry %s: BackupsRestorable %+v; want %s %s", name, c, want[0], want[1])
		}
		t.Logf("%s: %+v", name, c)
	}
	if c := restorableCheck(p, good); c != nil && !strings.Contains(c.Message, "restored to revision "+itoa(rev)) {
		t.Errorf("message %q does not say the revision %d", c.Message, rev)
	}
	if c := restorableCheck(p, bad); c != nil && !strings.Contains(c.Message, bad+strings.TrimPrefix(lastDelta, good)) {
		t.Errorf("message %q does not name the damaged delta", c.Message)
	}
	if !strings.Contains(p.Summary, "1 restorable, 1 not restorable") {
		t.Errorf("summary %q lacks the drills' counts", p.Summary)
	}
	rehearsing.Stop()
	for name, rv := range before {
		be := &extensionsv1alpha1.BackupEntry{}
		if err := env.K8s.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
			t.Fatal(err)
		}
		if be.ResourceVersion != rv {
			t.Errorf("entry %s was written by the rehearsal (resourceVersion %s, was %s): status %+v annotations %v finalizers %v",
				name, be.ResourceVersion, rv, be.Status, be.Annotations, be.Finalizers)
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// waitForReport waits for the rehearsal's ConfigMap to report names.
func waitForReport(t *testing.T, k8s client.Client, names ...string) rehearsal.Published {
	t.Helper()
	key := client.ObjectKey{Namespace: "garden", Name: "gardener-extension-backup-aws-rehearsal"}
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		cm := &corev1.ConfigMap{}
		var p rehearsal.Published
		if k8s.Get(context.Background(), key, cm) == nil && json.Unmarshal([]byte(cm.Data[rehearsal.ConfigMapKey]), &p) == nil {
			all := true
			for _, n := range names {
				all = all && restorableCheck(p, n) != nil
			}
			if all {
				return p
			}
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("no rehearsal report drilled %v", names)
	return rehearsal.Published{}
}

func restorableCheck(p rehearsal.Published, entry string) *rehearsal.Check {
	for _, r := range p.Reports {
		if r.Kind != rehearsal.KindBackupEntry || r.Name != entry {
			continue
		}
		for i := range r.Checks {
			if r.Checks[i].Name == rehearsal.CheckBackupsRestorable {
				return &r.Checks[i]
			}
		}
	}
	return nil
}
