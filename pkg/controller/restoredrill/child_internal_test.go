// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package restoredrill

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/drill"
)

// childPanicArg makes the test binary, re-executed, act as a restore process that panics in a
// goroutine of its own, as etcd's would. (The child itself and its protocol are pkg/drill's and
// tested there: child_test.go.)
const childPanicArg = "restoredrill-child=panic"

func TestMain(m *testing.M) {
	for _, a := range os.Args[1:] {
		if a == childPanicArg {
			go func() { panic("bbolt: page 7 already freed (test)") }()
			time.Sleep(time.Hour)
		}
	}
	os.Exit(m.Run())
}

// A reconcile whose restore process crashes publishes RestoreFailed, and the scratch directory
// is removed all the same (the fixture checks it after every reconcile).
func TestReconcileWithCrashingRestoreProcess(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.restore = drill.ChildRestorer{Path: os.Args[0], Args: []string{"-test.run=^$", childPanicArg}}.Restore
	f.toFirstDrill()
	o := f.reconcile()
	if o.cond.Status != gardencorev1beta1.ConditionFalse || o.cond.Reason != string(drill.ReasonRestoreFailed) || !strings.Contains(o.cond.Message, "panic:") {
		t.Fatalf("condition %+v", o.cond)
	}
}

// A restore process that ran without Landlock (the kernel offers none) restores all the same,
// and the condition says so, beside the etcd's verdict.
func TestUnconfinedRestoreIsSaidInTheCondition(t *testing.T) {
	f := newFixture(t)
	f.chain("etcd-main")
	f.restore = func(ctx context.Context, ch drill.Chain, dir string, deltas *os.File) drill.Result {
		r := f.restored(ctx, ch, dir, deltas)
		r.Unconfined = "the kernel offers no Landlock (function not implemented)"
		return r
	}
	f.toFirstDrill()
	o := f.reconcile()
	if o.cond.Status != gardencorev1beta1.ConditionTrue || !strings.Contains(o.cond.Message, "restored to revision 40") ||
		!strings.Contains(o.cond.Message, "the restore process ran without Landlock confinement: the kernel offers no Landlock (function not implemented)") {
		t.Fatalf("condition %+v", o.cond)
	}
}
