// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package lasterror_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

func TestFor(t *testing.T) {
	wrap := func(sentinel error) error { return fmt.Errorf("bucket x: %w: sdk says no", sentinel) }
	cases := []struct {
		name        string
		err         error
		wantCode    gardencorev1beta1.ErrorCode // empty: none
		wantRequeue time.Duration               // 0: not a RequeueAfterError
	}{
		{"unauthenticated", wrap(objectstore.ErrUnauthenticated), gardencorev1beta1.ErrorInfraUnauthenticated, 0},
		{"forbidden", wrap(objectstore.ErrForbidden), gardencorev1beta1.ErrorInfraUnauthorized, 0},
		{"invalid config", wrap(objectstore.ErrInvalidConfig), gardencorev1beta1.ErrorConfigurationProblem, 0},
		{"owned by other", wrap(objectstore.ErrOwnedByOther), gardencorev1beta1.ErrorConfigurationProblem, 0},
		{"unsupported", wrap(objectstore.ErrUnsupported), gardencorev1beta1.ErrorConfigurationProblem, 0},
		{"quota", wrap(objectstore.ErrQuotaExceeded), gardencorev1beta1.ErrorInfraQuotaExceeded, 0},
		{"throttled", wrap(objectstore.ErrThrottled), gardencorev1beta1.ErrorInfraRateLimitsExceeded, lasterror.ThrottledRequeue},
		{"throttled with a longer delay", &objectstore.RetryAfterError{After: time.Minute, Cause: errors.New("slow")}, gardencorev1beta1.ErrorInfraRateLimitsExceeded, time.Minute},
		{"in progress", &lasterror.InProgressError{Bucket: "b", Prefix: "p/", Deleted: 5}, "", lasterror.ProgressRequeue},
		{"locked", &lasterror.LockedObjectsError{Bucket: "b", Count: 2, RetainUntil: time.Now().Add(10 * time.Minute)}, gardencorev1beta1.ErrorInfraDependencies, 10 * time.Minute},
		{"unreachable", wrap(objectstore.ErrUnreachable), gardencorev1beta1.ErrorRetryableInfraDependencies, 0},
		{"unknown", errors.New("boom"), "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := lasterror.For(c.err)
			var requeue *reconcilerutils.RequeueAfterError
			isRequeue := errors.As(got, &requeue)
			if (c.wantRequeue != 0) != isRequeue {
				t.Fatalf("RequeueAfterError = %v; want %v", isRequeue, c.wantRequeue != 0)
			}
			if isRequeue {
				// gardener's reconcilers detect it by type assertion: it must be the outermost error.
				if _, ok := got.(*reconcilerutils.RequeueAfterError); !ok {
					t.Fatal("the RequeueAfterError is wrapped")
				}
				if d := requeue.RequeueAfter - c.wantRequeue; d < -time.Second || d > time.Second {
					t.Fatalf("requeue after %v; want %v", requeue.RequeueAfter, c.wantRequeue)
				}
				got = requeue.Cause
			}
			codes := v1beta1helper.ExtractErrorCodes(got)
			if c.wantCode == "" {
				if len(codes) != 0 {
					t.Fatalf("codes %v; want none", codes)
				}
			} else if !slices.Contains(codes, c.wantCode) {
				t.Fatalf("codes %v; want %s", codes, c.wantCode)
			}
			if !errors.Is(got, c.err) && !errors.Is(got, errors.Unwrap(c.err)) {
				t.Fatalf("the cause is lost: %v", got)
			}
		})
	}
	if lasterror.For(nil) != nil {
		t.Fatal("nil must stay nil")
	}
}
