// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package rehearsal_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/rehearsal"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/restoredrill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// snapshot is data with its SHA-256 appended, as etcd-backup-restore stores snapshots.
func snapshot(data []byte) []byte {
	sum := sha256.Sum256(data)
	return append(bytes.Clone(data), sum[:]...)
}

// putChain stores etcd-main's full snapshot (revisions 0-10) and one delta (11-20) under entry's
// prefix; corrupt changes a byte of the full snapshot after its hash was taken.
func putChain(t *testing.T, mem *memstore.Store, entry string, corrupt bool) {
	t.Helper()
	full := snapshot(make([]byte, 512))
	if corrupt {
		full[7] ^= 0xff
	}
	for key, data := range map[string][]byte{
		entry + "/etcd-main/v2/Full-00000000-00000010-1700000010": full,
		entry + "/etcd-main/v2/Incr-00000011-00000020-1700000020": snapshot([]byte("[]")),
	} {
		if err := mem.PutObject(context.Background(), bucketName, key, data); err != nil {
			t.Fatal(err)
		}
	}
}

// restoreInMemory restores a chain by reading every delta frame it is sent, at the chain's last
// revision: the drill's verification of the snapshots' hashes is the real one.
func restoreInMemory(_ context.Context, ch drill.Chain, _ string, deltas *os.File) drill.Result {
	for i := range ch.Deltas {
		var hdr [8]byte
		if _, err := io.ReadFull(deltas, hdr[:]); err != nil {
			return drill.Result{Etcd: ch.Etcd, Err: fmt.Errorf("delta %d did not arrive: %w", i, err)}
		}
		if _, err := io.CopyN(io.Discard, deltas, int64(binary.BigEndian.Uint64(hdr[:]))); err != nil {
			return drill.Result{Etcd: ch.Etcd, Err: fmt.Errorf("delta %d did not arrive: %w", i, err)}
		}
	}
	return drill.Result{Etcd: ch.Etcd, Full: ch.Full.Key, Deltas: len(ch.Deltas), Revision: ch.LastRevision(), Keys: 1}
}

// TestOnceWithDrills: with Options.Drills, each live entry's drill verdict is its check
// BackupsRestorable in the published report, the summary counts them and the metric has them,
// and nothing is written to any BackupEntry: no status, condition, drillStarted mark, annotation
// or finalizer (every write counted by the interceptor).
func TestOnceWithDrills(t *testing.T) {
	ctx := context.Background()
	var writes []string
	count := func(verb string, obj client.Object, sub string) {
		w := fmt.Sprintf("%s %T %s%s", verb, obj, obj.GetName(), sub)
		if cm, ok := obj.(*corev1.ConfigMap); ok && strings.HasSuffix(cm.Name, "-drill") {
			var m struct{ Entry string }
			_ = json.Unmarshal([]byte(cm.Data["drilling"]), &m)
			w += " mark=" + cmp.Or(m.Entry, "none")
		}
		writes = append(writes, w)
	}
	c := seed(t, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			count("create", obj, "")
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			count("update", obj, "")
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			count("patch", obj, "")
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			count("delete", obj, "")
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			count("update", obj, "/"+sub)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			count("patch", obj, "/"+sub)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	// Entry d (a corrupted full snapshot) is created before the writes are watched.
	d := entry("shoot--p--d--1")
	d.ResourceVersion = ""
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	writes = nil
	before := theirs(t, c)

	mem := controllertest.Bucket(t, bucketName)
	putChain(t, mem, "shoot--p--a--1", false)
	putChain(t, mem, "shoot--p--d--1", true)
	r := rehearser(c, planning{Store: mem})
	opts := restoredrill.DefaultOptions()
	opts.ScratchDir = t.TempDir()
	r.Options.Drills = &restoredrill.Driller{Reader: c, Options: opts,
		SourceFor: restoredrill.StoreSource(c, provider.Register(controllertest.Provider{Store: mem})),
		Restore:   restoreInMemory, Slots: restoredrill.NewSlots(opts)}
	if err := r.Once(ctx); err != nil {
		t.Fatal(err)
	}

	if after := theirs(t, c); !apiequality.Semantic.DeepEqual(before, after) {
		t.Fatal("the rehearsal's drills changed objects that are not its own")
	}
	// Its own only: the report, the drill mark in <name>-drill (set before each of the 3 drills,
	// removed when it returns: a kill between drills is no drill's), and the Extension's status.
	const marked = "*v1.ConfigMap gardener-extension-backup-mem-rehearsal-drill mark="
	want := []string{
		"create " + marked + "shoot--p--a--1", "update " + marked + "none",
		"update " + marked + "shoot--p--b--1", "update " + marked + "none",
		"update " + marked + "shoot--p--d--1", "update " + marked + "none",
		"create *v1.ConfigMap gardener-extension-backup-mem-rehearsal", "patch *v1alpha1.Extension backup-mem/status",
	}
	if !slices.Equal(writes, want) {
		t.Fatalf("writes %v; want only its own %v", writes, want)
	}
	mark := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: r.Options.Namespace, Name: r.Options.Name + "-drill"}, mark); err != nil || mark.Data["drilling"] != "" {
		t.Fatalf("drill mark %v (%v); want removed after the pass", mark.Data, err)
	}

	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: r.Options.Namespace, Name: r.Options.Name}, cm); err != nil {
		t.Fatal(err)
	}
	var published rehearsal.Published
	if err := json.Unmarshal([]byte(cm.Data[rehearsal.ConfigMapKey]), &published); err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]struct {
		status gardencorev1beta1.ConditionStatus
		reason string
	}{
		"shoot--p--a--1": {gardencorev1beta1.ConditionTrue, restoredrill.ReasonRestored},
		"shoot--p--b--1": {gardencorev1beta1.ConditionUnknown, restoredrill.ReasonDrillFailed}, // its secret is missing
		"shoot--p--d--1": {gardencorev1beta1.ConditionFalse, string(drill.ReasonHashMismatch)},
	}
	for _, rep := range published.Reports {
		if rep.Kind != rehearsal.KindBackupEntry {
			continue
		}
		w, ok := verdicts[rep.Name]
		if !ok {
			t.Fatalf("report of entry %s, which is not ours", rep.Name)
		}
		delete(verdicts, rep.Name)
		var got *rehearsal.Check
		for i := range rep.Checks {
			if rep.Checks[i].Name == rehearsal.CheckBackupsRestorable {
				got = &rep.Checks[i]
			}
		}
		if got == nil || got.Status != w.status || got.Reason != w.reason || got.Message == "" {
			t.Fatalf("entry %s: BackupsRestorable %+v; want %s %s with a message", rep.Name, got, w.status, w.reason)
		}
	}
	if len(verdicts) > 0 {
		t.Fatalf("no report of %v", verdicts)
	}
	if !strings.Contains(published.Summary, "restore drills of 3 BackupEntries: 1 restorable, 1 not restorable, 1 proved nothing") {
		t.Fatalf("summary %q lacks the drills' counts", published.Summary)
	}
	if got := testutil.ToFloat64(metrics.RehearsalRestorable.WithLabelValues("shoot--p--a--1")); got != 1 {
		t.Fatalf("restorable gauge of entry a %v; want 1", got)
	}
	if got := testutil.ToFloat64(metrics.RehearsalRestorable.WithLabelValues("shoot--p--d--1")); got != 0 {
		t.Fatalf("restorable gauge of entry d %v; want 0", got)
	}
	if n := testutil.CollectAndCount(metrics.RehearsalRestorable); n != 2 {
		t.Fatalf("%d restorable series; want 2 (entry b proved nothing)", n)
	}
}

// TestOnceWithoutDrills: drills are opt-in: without Options.Drills, no entry has the check.
func TestOnceWithoutDrills(t *testing.T) {
	c := seed(t, interceptor.Funcs{})
	mem := controllertest.Bucket(t, bucketName)
	putChain(t, mem, "shoot--p--a--1", false)
	reports, err := rehearser(c, planning{Store: mem}).Rehearse(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, rep := range reports {
		for _, ch := range rep.Checks {
			if ch.Name == rehearsal.CheckBackupsRestorable {
				t.Fatalf("%s %s drilled without Options.Drills", rep.Kind, rep.Name)
			}
		}
	}
	if _, _, msg := rehearsal.Summary(reports); strings.Contains(msg, "restore drills") {
		t.Fatalf("summary %q counts drills that did not run", msg)
	}
}

// TestOnceAfterAKilledDrill: a drill mark left by a pass whose process was killed during the drill
// of entry a: the next pass reports a's drill interrupted without drilling it, drills the others,
// and removes the mark.
func TestOnceAfterAKilledDrill(t *testing.T) {
	ctx := context.Background()
	c := seed(t, interceptor.Funcs{})
	r := rehearser(c, planning{Store: controllertest.Bucket(t, bucketName)})
	left := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: r.Options.Namespace, Name: r.Options.Name + "-drill"},
		Data: map[string]string{"drilling": `{"entry":"shoot--p--a--1","started":"2026-11-29T04:00:00Z"}`}}
	if err := c.Create(ctx, left); err != nil {
		t.Fatal(err)
	}
	mem := controllertest.Bucket(t, bucketName)
	putChain(t, mem, "shoot--p--a--1", false)
	putChain(t, mem, "shoot--p--b--1", false)
	r = rehearser(c, planning{Store: mem})
	var drilled []string
	opts := restoredrill.DefaultOptions()
	opts.ScratchDir = t.TempDir()
	r.Options.Drills = &restoredrill.Driller{Reader: c, Options: opts,
		SourceFor: restoredrill.StoreSource(c, provider.Register(controllertest.Provider{Store: mem})),
		Restore: func(ctx context.Context, ch drill.Chain, dir string, deltas *os.File) drill.Result {
			drilled = append(drilled, ch.Full.Key)
			return restoreInMemory(ctx, ch, dir, deltas)
		}, Slots: restoredrill.NewSlots(opts)}
	reports, err := r.Rehearse(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, rep := range reports {
		if rep.Name != "shoot--p--a--1" {
			continue
		}
		i := slices.IndexFunc(rep.Checks, func(c rehearsal.Check) bool { return c.Name == rehearsal.CheckBackupsRestorable })
		if i < 0 || rep.Checks[i].Status != gardencorev1beta1.ConditionUnknown || rep.Checks[i].Reason != restoredrill.ReasonDrillInterrupted ||
			!strings.Contains(rep.Checks[i].Message, "2026-11-29T04:00:00Z") {
			t.Fatalf("entry a's checks %+v; want BackupsRestorable Unknown DrillInterrupted since the mark's time", rep.Checks)
		}
	}
	if len(drilled) != 0 {
		t.Fatalf("restored %v; want none: a is not drilled in this pass and b's secret is missing", drilled)
	}
	mark := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(left), mark); err != nil || mark.Data["drilling"] != "" {
		t.Fatalf("drill mark %v (%v); want removed after the pass", mark.Data, err)
	}
}
