// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/copystore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/controllertest"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/conformance"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore/memstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/replication"
)

// TestDecideWay: while copy.serve is primary, which way a look copies.
func TestDecideWay(t *testing.T) {
	cases := []struct {
		name                  string
		writesCopy, namesCopy bool
		lastReason            string
		want                  way
	}{
		{name: "the shoot writes the entry's bucket", lastReason: ReasonCopied, want: wayForward},
		{name: "never copied", want: wayForward},
		{name: "etcd-backup names the copy, the shoot writes it, after serving it", writesCopy: true, namesCopy: true, lastReason: ReasonServingFromCopy, want: wayBack},
		{name: "etcd-backup names the copy, the shoot writes it, copying back", writesCopy: true, namesCopy: true, lastReason: ReasonCopyingBack, want: wayBack},
		{name: "etcd-backup names the copy, copied back: the entry's reconcile is to switch", writesCopy: true, namesCopy: true, lastReason: ReasonCopiedBack, want: wayBack},
		{name: "etcd-backup names the copy, lagging before", writesCopy: true, namesCopy: true, lastReason: ReasonCopyLagging, want: wayBack},
		{name: "etcd-backup names the copy, the switch was pending: the shoot writes the entry's bucket", namesCopy: true, lastReason: ReasonCopyLagging, want: wayForward},
		{name: "bucketName switched after CopiedBack, the Etcd not rolled: the shoot writes the copy", writesCopy: true, lastReason: ReasonCopiedBack, want: wayCatchUp},
		{name: "bucketName switched, the Etcd not rolled, a catch-up still copying back", writesCopy: true, lastReason: ReasonCopyingBack, want: wayCatchUp},
		{name: "the shoot writes the copy though etcd-backup never named it (no guard): copied back", writesCopy: true, lastReason: ReasonCopied, want: wayCatchUp},
		{name: "the Etcd rolled onto the entry's bucket after CopiedBack: one final reverse pass", lastReason: ReasonCopiedBack, want: wayFinal},
		{name: "the Etcd rolled, the final pass still copying back", lastReason: ReasonCopyingBack, want: wayFinal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := decideWay(c.writesCopy, c.namesCopy, c.lastReason); got != c.want {
				t.Fatalf("got %v; want %v", got, c.want)
			}
		})
	}
}

// TestDecideBack: BackupsCopied after a reverse pass: CopiedBack only when the pass found
// nothing missing; how many are left, or why none could be copied, otherwise.
func TestDecideBack(t *testing.T) {
	snap := objectstore.ObjectVersion{Key: "e/etcd-main/v2/Incr-00000011-00000020-1764417900", Size: 3}
	cases := []struct {
		name   string
		o      outcome
		w      way
		status gardencorev1beta1.ConditionStatus
		reason string
		saying []string
	}{
		{name: "the primary is unreachable", o: outcome{sourceErr: errors.New("dial tcp: connection refused")},
			status: gardencorev1beta1.ConditionUnknown, reason: ReasonCopyingBack,
			saying: []string{`bucket "b" cannot be reached`, "connection refused", `keeps naming the copy bucket "b-copy"`}},
		{name: "the copy is unreadable", o: outcome{copyErr: errors.New("forbidden")},
			status: gardencorev1beta1.ConditionUnknown, reason: ReasonCopyingBack, saying: []string{`the copy bucket "b-copy" cannot be read`, "forbidden"}},
		{name: "nothing missing", o: outcome{result: replication.Result{Plan: replication.Plan{InSync: 5}}},
			status: gardencorev1beta1.ConditionTrue, reason: ReasonCopiedBack, saying: []string{`bucket "b" holds every snapshot of the copy bucket "b-copy" (5 in sync)`}},
		{name: "copied everything it found: the next pass must find none missing", o: outcome{result: replication.Result{Plan: replication.Plan{Copy: []objectstore.ObjectVersion{snap, snap}}, Copied: 2}},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonCopyingBack, saying: []string{"copied 2, 0 are left", `keeps naming the copy bucket "b-copy"`}},
		{name: "some failed", o: outcome{result: replication.Result{Plan: replication.Plan{Copy: []objectstore.ObjectVersion{snap, snap, snap}}, Copied: 1,
			Failed: []objectstore.ObjectError{{Object: snap}, {Object: snap}}}, copyFailed: errors.New("slow down")},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonCopyingBack, saying: []string{"copied 1, 2 are left", "2 were not copied: slow down"}},
		{name: "a conflict in the primary", o: outcome{result: replication.Result{Plan: replication.Plan{Conflicts: []replication.Conflict{{Source: snap}}}}},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonCopyingBack, saying: []string{"copied 0, 1 are left", "never overwritten", "An operator must look"}},
		{name: "a write raced: not done", o: outcome{result: replication.Result{Plan: replication.Plan{Copy: []objectstore.ObjectVersion{snap}}, WriteConflicts: []objectstore.ObjectVersion{snap}}},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonCopyingBack, saying: []string{"copied 0, 1 are left"}},
		{name: "the final pass after the roll copied everything it found: done", o: outcome{result: replication.Result{Plan: replication.Plan{Copy: []objectstore.ObjectVersion{snap}}, Copied: 1}}, w: wayFinal,
			status: gardencorev1beta1.ConditionTrue, reason: ReasonCopiedBack, saying: []string{`names bucket "b" from the entry's next reconcile`}},
		{name: "the final pass after the roll, one failed", o: outcome{result: replication.Result{Plan: replication.Plan{Copy: []objectstore.ObjectVersion{snap}}, Failed: []objectstore.ObjectError{{Object: snap}}}, copyFailed: errors.New("slow down")}, w: wayFinal,
			status: gardencorev1beta1.ConditionFalse, reason: ReasonCopyingBack, saying: []string{"1 are left", `the shoot writes bucket "b" again`}},
		{name: "the final pass after the roll, the primary unreachable", o: outcome{sourceErr: errors.New("refused")}, w: wayFinal,
			status: gardencorev1beta1.ConditionUnknown, reason: ReasonCopyingBack, saying: []string{`the shoot writes bucket "b" again`}},
		{name: "a catch-up before the roll copied everything it found: CopiedBack, the shoot still writes the copy", o: outcome{result: replication.Result{Plan: replication.Plan{Copy: []objectstore.ObjectVersion{snap}}, Copied: 1}}, w: wayCatchUp,
			status: gardencorev1beta1.ConditionTrue, reason: ReasonCopiedBack, saying: []string{`names bucket "b" again, but the shoot writes the copy bucket "b-copy" until gardenlet rolls its Etcd`}},
		{name: "the final pass after the roll, the copy's late delta superseded by the primary's chain: done, and said",
			o: outcome{result: replication.Result{Plan: replication.Plan{InSync: 2, Superseded: []objectstore.ObjectVersion{snap}}}}, w: wayFinal,
			status: gardencorev1beta1.ConditionTrue, reason: ReasonCopiedBack, saying: []string{"1 snapshots of the copy bucket are never copied back", `reach the chain etcd-backup-restore writes into bucket "b"`, snap.Key}},
		{name: "the final pass after the roll, one failed, one superseded: both said", o: outcome{result: replication.Result{Plan: replication.Plan{Copy: []objectstore.ObjectVersion{snap},
			Superseded: []objectstore.ObjectVersion{snap}}, Failed: []objectstore.ObjectError{{Object: snap}}}, copyFailed: errors.New("slow down")}, w: wayFinal,
			status: gardencorev1beta1.ConditionFalse, reason: ReasonCopyingBack, saying: []string{"1 are left", "1 snapshots of the copy bucket are never copied back"}},
		{name: "a catch-up before the roll, the copy unreadable", o: outcome{copyErr: errors.New("forbidden")}, w: wayCatchUp,
			status: gardencorev1beta1.ConditionUnknown, reason: ReasonCopyingBack, saying: []string{"forbidden", "the shoot writes the copy bucket"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := decideBack(c.o, "b", "b-copy", c.w)
			if v.status != c.status || v.reason != c.reason {
				t.Fatalf("got %s %s (%s); want %s %s", v.status, v.reason, v.message, c.status, c.reason)
			}
			for _, s := range c.saying {
				if !strings.Contains(v.message, s) {
					t.Errorf("message %q does not say %q", v.message, s)
				}
			}
		})
	}
}

// TestCopyBackBeforeServingThePrimary: copy.serve is primary again while the shoot's etcd-backup
// names the copy bucket, and the primary is empty (recreated). The entry copy copies the copy's
// snapshots back; the serve decision keeps the copy (CopyingBack) until a reverse pass found
// nothing missing (CopiedBack), which asks for the entry's reconcile. After the switch, one more
// reverse pass brings what the shoot wrote into the copy meanwhile, then the forward copy goes on.
// Nothing is deleted in either bucket.
func TestCopyBackBeforeServingThePrimary(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	name := "shoot--p--b--1"
	full, delta := name+"/etcd-main/v2/Full-00000000-00000010-1764417600", name+"/etcd-main/v2/Incr-00000011-00000020-1764417900"
	store := memstore.WithFaults(controllertest.Bucket(t, "bucket-copy", full, delta))
	if err := store.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket"}); err != nil {
		t.Fatal(err)
	}
	settings := &copystore.Settings{CredentialsRef: "backup-copy", Serve: copystore.ServePrimary}
	rig := newCopyRig(t, store, name, controllertest.Config{CopyField: copystore.CopyField{Copy: settings}}, now)
	if err := rig.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"},
		Data: map[string][]byte{"key": []byte("the copy's")}}); err != nil {
		t.Fatal(err)
	}
	// The shoot writes the copy: its Etcd names the copy bucket, etcd-backup holds the copy's
	// credentials.
	etcdBackup := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--b", Name: "etcd-backup"},
		Data: map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte("bucket-copy"), "key": []byte("the copy's")}}
	if err := rig.c.Create(ctx, etcdBackup); err != nil {
		t.Fatal(err)
	}
	etcd := &druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--b", Name: "etcd-main"},
		Spec: druidcorev1alpha1.EtcdSpec{Backup: druidcorev1alpha1.BackupSpec{Store: &druidcorev1alpha1.StoreSpec{Container: new("bucket-copy")}}}}
	if err := rig.c.Create(ctx, etcd); err != nil {
		t.Fatal(err)
	}
	served := func() connect.ServePlan {
		t.Helper()
		be := &extensionsv1alpha1.BackupEntry{}
		if err := rig.c.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
			t.Fatal(err)
		}
		plan, _, err := connect.ServeOf(ctx, rig.c, rig.cp.Provider, be, false)
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	keys := func(bucket string) []string {
		t.Helper()
		got, err := conformance.ListKeys(ctx, store, bucket, name+"/")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if plan := served(); !plan.FromCopy || plan.Reason != connect.ServeReasonCopyingBack {
		t.Fatalf("before the reverse pass: %+v; want the copy (CopyingBack)", plan)
	}

	// The primary cannot be written: stays on the copy, says why.
	store.Fail(memstore.OpPutObject, objectstore.ErrUnreachable)
	if cond := rig.pass(); cond == nil || cond.Reason != ReasonCopyingBack || !strings.Contains(cond.Message, "2 are left") {
		t.Fatalf("the primary refusing writes: %v; want CopyingBack with 2 left", cond)
	}
	if plan := served(); !plan.FromCopy {
		t.Fatalf("the primary refusing writes: %+v; want the copy", plan)
	}
	store.Fail(memstore.OpPutObject, nil)

	if cond := rig.pass(); cond == nil || cond.Status != gardencorev1beta1.ConditionFalse || cond.Reason != ReasonCopyingBack || !strings.Contains(cond.Message, "copied 2, 0 are left") {
		t.Fatalf("the first reverse pass: %v; want False CopyingBack, copied 2", cond)
	}
	if got := keys("bucket"); len(got) != 2 {
		t.Fatalf("the primary holds %v; want both snapshots", got)
	}
	if plan := served(); !plan.FromCopy {
		t.Fatalf("after a pass that copied: %+v; want the copy until a pass finds none missing", plan)
	}
	if cond := rig.pass(); cond == nil || cond.Status != gardencorev1beta1.ConditionTrue || cond.Reason != ReasonCopiedBack {
		t.Fatalf("the second reverse pass: %v; want True CopiedBack", cond)
	}
	be := &extensionsv1alpha1.BackupEntry{}
	if err := rig.c.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
		t.Fatal(err)
	}
	if be.Annotations[v1beta1constants.GardenerOperation] != v1beta1constants.GardenerOperationReconcile {
		t.Fatalf("annotations %v; want the entry's reconcile asked for", be.Annotations)
	}
	if plan := served(); plan.FromCopy || plan.Reason != connect.ServeReasonPrimary {
		t.Fatalf("copied back: %+v; want the primary", plan)
	}

	// The shoot wrote one more delta into the copy before the entry's reconcile switched
	// bucketName; etcd-backup keeps the copy's credentials while the Etcd names the copy
	// (connect.DecideEtcdBackup), so the shoot goes on writing the copy.
	late := name + "/etcd-main/v2/Incr-00000021-00000030-1764418200"
	if err := store.PutObject(ctx, "bucket-copy", late, []byte("late")); err != nil {
		t.Fatal(err)
	}
	etcdBackup.Data[v1beta1constants.DataKeyBackupBucketName] = []byte("bucket")
	if err := rig.c.Update(ctx, etcdBackup); err != nil {
		t.Fatal(err)
	}
	if cond := rig.pass(); cond == nil || cond.Reason != ReasonCopiedBack || !strings.Contains(cond.Message, "the shoot writes the copy bucket") {
		t.Fatalf("bucketName switched, the Etcd not rolled: %v; want a catch-up (CopiedBack) saying the shoot writes the copy", cond)
	}
	if got := keys("bucket"); len(got) != 3 {
		t.Fatalf("the primary holds %v; want the late delta too", got)
	}
	if plan := served(); plan.FromCopy {
		t.Fatalf("catching up before the roll: %+v; want the primary (not guarded again)", plan)
	}

	// Written into the copy after that catch-up, before gardenlet rolls the Etcd.
	later := name + "/etcd-main/v2/Incr-00000031-00000040-1764418500"
	if err := store.PutObject(ctx, "bucket-copy", later, []byte("later")); err != nil {
		t.Fatal(err)
	}
	if cond := rig.pass(); cond == nil || cond.Reason != ReasonCopiedBack {
		t.Fatalf("the Etcd still not rolled: %v; want another catch-up (CopiedBack)", cond)
	}
	if got := keys("bucket"); len(got) != 4 {
		t.Fatalf("the primary holds %v; want what the shoot wrote into the copy before the roll", got)
	}

	// gardenlet rolls the Etcd onto the primary; etcd-backup takes the primary's credentials.
	last := name + "/etcd-main/v2/Incr-00000041-00000050-1764418800"
	if err := store.PutObject(ctx, "bucket-copy", last, []byte("last")); err != nil {
		t.Fatal(err)
	}
	etcd.Spec.Backup.Store.Container = new("bucket")
	if err := rig.c.Update(ctx, etcd); err != nil {
		t.Fatal(err)
	}
	etcdBackup.Data["key"] = []byte("value")
	if err := rig.c.Update(ctx, etcdBackup); err != nil {
		t.Fatal(err)
	}
	// Woken by the roll (the Etcd watch), before its schedule: the final reverse pass runs at once.
	final := rig.wake()
	if final == nil || final.Reason != ReasonCopied {
		t.Fatalf("woken by the roll: %v; want the final reverse pass and then the forward pass (Copied)", final)
	}
	if got := keys("bucket"); len(got) != 5 {
		t.Fatalf("the primary holds %v; want everything the shoot wrote into the copy", got)
	}
	if got := keys("bucket-copy"); len(got) != 5 {
		t.Fatalf("the copy holds %v; want all five (nothing deleted)", got)
	}
	// Woken again before the forward pass is due, nothing changed (another event of the Etcd):
	// no pass; the shoot's new snapshot waits for the schedule.
	next := name + "/etcd-main/v2/Incr-00000051-00000060-1764419100"
	if err := store.PutObject(ctx, "bucket", next, []byte("next")); err != nil {
		t.Fatal(err)
	}
	rig.clock.Step(20 * time.Second) // less than the interval (a minute, jittered by at most a tenth): no pass is due
	if cond := rig.wake(); cond == nil || !cond.LastUpdateTime.Equal(&final.LastUpdateTime) || cond.Message != final.Message {
		t.Fatalf("woken again before the schedule: %v; want no pass (BackupsCopied as the final look left it: %v)", cond, final)
	}
	if got := keys("bucket-copy"); len(got) != 5 {
		t.Fatalf("woken before the schedule, the copy holds %v; want no forward pass yet", got)
	}
	if cond := rig.pass(); cond == nil || cond.Reason != ReasonCopied {
		t.Fatalf("the scheduled look: %v; want the forward pass (Copied)", cond)
	}
	if got := keys("bucket-copy"); len(got) != 6 {
		t.Fatalf("after the scheduled look the copy holds %v; want the new snapshot too", got)
	}
}

// TestFinalPassKeepsThePrimarysChain: after gardenlet rolled the shoot's Etcd onto the primary,
// the old etcd pod's sidecar (still holding the copy's credentials) puts a late delta into the
// copy, while the new leader goes on from the primary's newest snapshot and writes its own delta
// of the same revisions into the primary. The final reverse pass, repeated because the first one
// could not list, copies the late delta not back (the primary's chain would overlap: a restore
// fails), says so, and hands over to the forward pass.
func TestFinalPassKeepsThePrimarysChain(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	name := "shoot--p--f--1"
	snap := func(s string) string { return name + "/etcd-main/v2/" + s }
	full, delta := snap("Full-00000000-00000100-1764417600"), snap("Incr-00000101-00000200-1764417900")
	lateOld := snap("Incr-00000201-00000300-1764418200") // the old writer's, into the copy
	ownNew := snap("Incr-00000201-00000350-1764418260")  // the new writer's, into the primary
	mem := controllertest.Bucket(t, "bucket-copy", full, delta)
	if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket"}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{full, delta} { // copied back by the catch-ups before the roll
		if err := mem.PutObject(ctx, "bucket", key, []byte("data of "+key)); err != nil {
			t.Fatal(err)
		}
	}
	store := memstore.WithFaults(mem)
	settings := &copystore.Settings{CredentialsRef: "backup-copy", Serve: copystore.ServePrimary}
	rig := newCopyRig(t, store, name, controllertest.Config{CopyField: copystore.CopyField{Copy: settings}}, now)
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}, Data: map[string][]byte{"key": []byte("the copy's")}},
		// Rolled: etcd-backup and the Etcd name the primary.
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--f", Name: "etcd-backup"},
			Data: map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte("bucket"), "key": []byte("value")}},
		&druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--f", Name: "etcd-main"},
			Spec: druidcorev1alpha1.EtcdSpec{Backup: druidcorev1alpha1.BackupSpec{Store: &druidcorev1alpha1.StoreSpec{Container: new("bucket")}}}},
	} {
		if err := rig.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// The last catch-up before the roll left nothing missing.
	be := &extensionsv1alpha1.BackupEntry{}
	if err := rig.c.Get(ctx, client.ObjectKey{Name: name}, be); err != nil {
		t.Fatal(err)
	}
	be.Status.Conditions = []gardencorev1beta1.Condition{{Type: ConditionBackupsCopied, Status: gardencorev1beta1.ConditionTrue, Reason: ReasonCopiedBack,
		LastTransitionTime: metav1.NewTime(now.Add(-time.Minute)), LastUpdateTime: metav1.NewTime(now.Add(-time.Minute))}}
	if err := rig.c.Status().Update(ctx, be); err != nil {
		t.Fatal(err)
	}

	// The first final pass cannot list: BackupsCopied stays CopyingBack, every look repeats it.
	store.Fail(memstore.OpListObjects, objectstore.ErrUnreachable)
	if cond := rig.wake(); cond == nil || cond.Reason != ReasonCopyingBack || !strings.Contains(cond.Message, `the shoot writes bucket "bucket" again`) {
		t.Fatalf("the first final pass, nothing listed: %v; want CopyingBack after the roll", cond)
	}
	store.Fail(memstore.OpListObjects, nil)
	for bucket, key := range map[string]string{"bucket-copy": lateOld, "bucket": ownNew} {
		if err := mem.PutObject(ctx, bucket, key, []byte("data of "+key)); err != nil {
			t.Fatal(err)
		}
	}

	cond := rig.pass()
	chains, err := drill.Collect(ctx, mem, "bucket", name+"/")
	if err != nil {
		t.Fatalf("the primary's chain as etcd-backup-restore restores it: %v", err)
	}
	if len(chains) != 1 {
		t.Fatalf("the primary holds %d chains; want etcd-main's", len(chains))
	}
	if ch := chains[0]; ch.Err != nil || ch.LastRevision() != 350 {
		t.Fatalf("the primary's chain ends at revision %d: %v; want it unbroken to 350", ch.LastRevision(), ch.Err)
	}
	got, err := conformance.ListKeys(ctx, mem, "bucket", name+"/")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{full, delta, ownNew}; !slices.Equal(got, want) {
		t.Fatalf("the primary holds %v; want %v (not the old writer's late delta)", got, want)
	}
	if cond == nil || cond.Status != gardencorev1beta1.ConditionTrue || cond.Reason != ReasonCopied ||
		!strings.Contains(cond.Message, "1 snapshots of the copy bucket are never copied back") || !strings.Contains(cond.Message, lateOld) {
		t.Fatalf("the repeated final pass: %v; want it done and the forward pass (True Copied) naming the left-out %s", cond, lateOld)
	}
	// The next look goes forward: the forward pass's verdict, not a reverse pass's.
	if cond := rig.pass(); cond == nil || cond.Reason != ReasonCopied {
		t.Fatalf("the next look: %v; want the forward pass (Copied)", cond)
	}
}

// TestCopyBackBeforeTheRollKeepsNothingOut: before the roll nothing writes the primary; what it
// alone holds beyond the snapshots both hold (a delta the forward pass had not copied before the
// outage) is history, and the copy's snapshots of the same revisions come back all the same.
func TestCopyBackBeforeTheRollKeepsNothingOut(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	name := "shoot--p--h--1"
	snap := func(s string) string { return name + "/etcd-main/v2/" + s }
	full := snap("Full-00000000-00000350-1764417600")
	leftover := snap("Incr-00000351-00000400-1764417900") // the primary's, never copied forward
	served := snap("Incr-00000351-00000420-1764418200")   // the copy's, written while it was served
	mem := controllertest.Bucket(t, "bucket-copy", full, served)
	if err := mem.EnsureBucket(ctx, objectstore.Bucket{Name: "bucket"}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{full, leftover} {
		if err := mem.PutObject(ctx, "bucket", key, []byte("data of "+key)); err != nil {
			t.Fatal(err)
		}
	}
	settings := &copystore.Settings{CredentialsRef: "backup-copy", Serve: copystore.ServePrimary}
	rig := newCopyRig(t, mem, name, controllertest.Config{CopyField: copystore.CopyField{Copy: settings}}, now)
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "garden", Name: "ref-backup-copy"}, Data: map[string][]byte{"key": []byte("the copy's")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--h", Name: "etcd-backup"},
			Data: map[string][]byte{v1beta1constants.DataKeyBackupBucketName: []byte("bucket-copy"), "key": []byte("the copy's")}},
		&druidcorev1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Namespace: "shoot--p--h", Name: "etcd-main"},
			Spec: druidcorev1alpha1.EtcdSpec{Backup: druidcorev1alpha1.BackupSpec{Store: &druidcorev1alpha1.StoreSpec{Container: new("bucket-copy")}}}},
	} {
		if err := rig.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if cond := rig.pass(); cond == nil || cond.Reason != ReasonCopyingBack || !strings.Contains(cond.Message, "copied 1, 0 are left") || strings.Contains(cond.Message, "never copied back") {
		t.Fatalf("the reverse pass before the roll: %v; want CopyingBack, the copy's delta copied", cond)
	}
	got, err := conformance.ListKeys(ctx, mem, "bucket", name+"/")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{full, leftover, served}; !slices.Equal(got, want) {
		t.Fatalf("the primary holds %v; want %v", got, want)
	}
}
