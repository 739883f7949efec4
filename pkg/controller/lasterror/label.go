// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package lasterror

import (
	"errors"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
)

// CountOperation counts one actuator pass of kind and operation over the object name in the
// reconcile metrics by Label(err) (and marks the object failing or not) and returns err as it is.
func CountOperation(kind, operation, name string, err error) error {
	metrics.CountOperation(kind, operation, name, Label(err))
	return err
}

// Label is how the reconcile metrics label err: succeeded, in_progress for a deletion that
// resumes, else the first Gardener error code of err (what status.lastError.codes shows) or
// "error".
func Label(err error) string {
	if err == nil {
		return metrics.OutcomeSucceeded
	}
	cause := reconcilerutils.ReconcileErrCauseOrErr(err) // the reconcilers' requeue wrapper has no Unwrap
	if errors.As(cause, new(*InProgressError)) {
		return metrics.OutcomeInProgress
	}
	if codes := v1beta1helper.ExtractErrorCodes(cause); len(codes) > 0 {
		return string(codes[0])
	}
	if codes := Codes(cause); len(codes) > 0 {
		return string(codes[0])
	}
	return "error"
}
