// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"errors"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// TestDecideBucketServe: BackupsServedFrom, and whether the primary's failure fails the
// BackupBucket's reconcile: never while the copy is served and ready (gardenlet reconciles no
// BackupEntry of a failed BackupBucket), always otherwise.
func TestDecideBucketServe(t *testing.T) {
	gone := errors.New("bucket \"b\": unreachable")
	cases := []struct {
		name    string
		o       serveObserved
		status  gardencorev1beta1.ConditionStatus // "": no condition
		reason  string
		saying  string
		wantErr error
	}{
		{name: "no copy", o: serveObserved{bucket: "b", primaryErr: gone}, wantErr: gone},
		{name: "no copy, converged", o: serveObserved{bucket: "b"}},
		{name: "serve primary", o: serveObserved{declared: true, copyReady: true, bucket: "b", copyName: "c"}, status: gardencorev1beta1.ConditionTrue, reason: connect.ServeReasonPrimary},
		{name: "serve primary, the primary fails", o: serveObserved{declared: true, copyReady: true, bucket: "b", copyName: "c", primaryErr: gone},
			status: gardencorev1beta1.ConditionTrue, reason: connect.ServeReasonPrimary, wantErr: gone},
		{name: "serve copy, ready", o: serveObserved{declared: true, servesCopy: true, copyReady: true, bucket: "b", copyName: "c"},
			status: gardencorev1beta1.ConditionTrue, reason: connect.ServeReasonCopy, saying: `served from the copy bucket "c"`},
		{name: "serve copy, ready, the primary gone: the reconcile succeeds and says so", o: serveObserved{declared: true, servesCopy: true, copyReady: true, bucket: "b", copyName: "c", primaryErr: gone},
			status: gardencorev1beta1.ConditionTrue, reason: connect.ServeReasonCopy, saying: "unreachable"},
		{name: "a recorded failover, ready, the primary gone: the copy by policy, the reconcile succeeds", o: serveObserved{declared: true, copyReady: true, bucket: "b", copyName: "c", primaryErr: gone, failover: &connect.FailoverRecord{CopyBucket: "c", Reason: "Unreachable"}},
			status: gardencorev1beta1.ConditionTrue, reason: connect.ServeReasonCopyByPolicy, saying: "automatic failover (copy.failover) was recorded"},
		{name: "a recorded failover adopted (serve copy)", o: serveObserved{declared: true, servesCopy: true, copyReady: true, bucket: "b", copyName: "c", failover: &connect.FailoverRecord{CopyBucket: "c"}},
			status: gardencorev1beta1.ConditionTrue, reason: connect.ServeReasonCopy},
		{name: "a recorded failover, the copy not ready: nothing serves", o: serveObserved{declared: true, bucket: "b", copyName: "c", primaryErr: gone, failover: &connect.FailoverRecord{CopyBucket: "c"}},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonCopyNotReady, wantErr: gone},
		{name: "a recorded failover, no copy declared any more: the configuration error, the record's bucket named", o: serveObserved{bucket: "b", failover: &connect.FailoverRecord{CopyBucket: "c"}},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonFailoverConflict, saying: `copy: was removed while an automatic failover to bucket "c" is recorded`, wantErr: objectstore.ErrInvalidConfig},
		{name: "a recorded failover, another copy bucket declared: the configuration error", o: serveObserved{declared: true, copyReady: true, bucket: "b", copyName: "c2", failover: &connect.FailoverRecord{CopyBucket: "c"}},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonFailoverConflict, saying: `the copy bucket is now "c2", but an automatic failover to bucket "c" is recorded`, wantErr: objectstore.ErrInvalidConfig},
		{name: "a recorded failover, another copy bucket declared and served: the configuration error", o: serveObserved{declared: true, servesCopy: true, copyReady: true, bucket: "b", copyName: "c2", failover: &connect.FailoverRecord{CopyBucket: "c"}},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonFailoverConflict, wantErr: objectstore.ErrInvalidConfig},
		{name: "serve copy, the copy not ready, the primary gone: nothing serves", o: serveObserved{declared: true, servesCopy: true, bucket: "b", copyName: "c", primaryErr: gone},
			status: gardencorev1beta1.ConditionFalse, reason: ReasonCopyNotReady, wantErr: gone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decideBucketServe(c.o)
			if !errors.Is(got.err, c.wantErr) || (c.wantErr == nil) != (got.err == nil) {
				t.Fatalf("error %v; want %v", got.err, c.wantErr)
			}
			if c.status == "" {
				if got.cond != nil {
					t.Fatalf("condition %+v; want none", got.cond)
				}
				return
			}
			if got.cond == nil || got.cond.Status != c.status || got.cond.Reason != c.reason || !strings.Contains(got.cond.Message, c.saying) {
				t.Fatalf("condition %+v; want %s %s saying %q", got.cond, c.status, c.reason, c.saying)
			}
		})
	}
}
