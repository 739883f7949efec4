// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package lasterror turns the actuators' errors into what gardener records: the Gardener error
// codes of status.lastError, the requeue of a deletion that resumes, and the label the reconcile
// metrics count them by.
package lasterror

import (
	"errors"
	"fmt"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

const (
	// ThrottledRequeue is how long a throttled reconcile waits when the store named no delay.
	ThrottledRequeue = 30 * time.Second
	// ProgressRequeue is how soon a deletion that ran out of time resumes.
	ProgressRequeue = time.Second
	// maxLockedRequeue caps the wait for retention locks to expire before looking again.
	maxLockedRequeue = time.Hour
)

// InProgressError reports a deletion that made progress but ran out of time within one
// reconcile; it is requeued at once and resumes where it stopped.
type InProgressError struct {
	Bucket, Prefix string
	Deleted        int
}

func (e *InProgressError) Error() string {
	return fmt.Sprintf("deletion in progress: %d object versions deleted under %q in bucket %q in this pass, continuing", e.Deleted, e.Prefix, e.Bucket)
}

// LockedObjectsError reports a bucket or a prefix that cannot be emptied because retention locks
// hold objects. It matches objectstore.ErrObjectLocked.
type LockedObjectsError struct {
	Bucket string
	// Prefix is empty for the whole bucket.
	Prefix      string
	Count       int
	RetainUntil time.Time
	// Deferred is true when the store was asked to delete them itself once the locks expire.
	Deferred bool
	// NotDeferred, when set, says why the store could not be asked to (no lifecycle rule
	// possible, no room for one, a rule not kept).
	NotDeferred error
}

func (e *LockedObjectsError) Error() string {
	until := "an unknown date (legal hold or undisclosed retention)"
	if !e.RetainUntil.IsZero() {
		until = e.RetainUntil.UTC().Format(time.RFC3339) + " at the earliest"
	}
	scope := fmt.Sprintf("bucket %q", e.Bucket)
	if e.Prefix != "" {
		scope = fmt.Sprintf("prefix %q in bucket %q", e.Prefix, e.Bucket)
	}
	then := "the deletion is retried then"
	switch {
	case e.Deferred:
		then = "a lifecycle rule deletes them when the locks expire and the deletion is retried then"
	case e.NotDeferred != nil:
		then = fmt.Sprintf("the store cannot delete them by itself (%v), so the deletion is retried then", e.NotDeferred)
	}
	return fmt.Sprintf("%s cannot be emptied: %d object versions are held by retention locks until %s; %s", scope, e.Count, until, then)
}

// Is makes errors.Is(err, objectstore.ErrObjectLocked) true.
func (e *LockedObjectsError) Is(target error) bool { return target == objectstore.ErrObjectLocked }

// NotEmptiedError reports a bucket that the store refuses to delete as not empty although a
// complete pass emptied it: something writes into it, or it holds what its listing does not show.
// It carries no requeue: the reconciler's exponential back-off bounds the retries.
type NotEmptiedError struct {
	Bucket string
	// Listed counts the object versions a listing shows now (at most one page) and First names
	// a few of them; both are empty when the listing shows nothing.
	Listed int
	First  []string
	Cause  error
}

func (e *NotEmptiedError) Error() string {
	left := "a listing now shows nothing, so the store holds what it does not list (hidden versions, or a listing without them)"
	if e.Listed > 0 {
		left = fmt.Sprintf("a listing now shows %d object versions, among them %q: something writes into the bucket while it is deleted", e.Listed, e.First)
	}
	return fmt.Sprintf("bucket %q was emptied but the store refuses to delete it as not empty; %s; retried with back-off: %v", e.Bucket, left, e.Cause)
}

// Unwrap returns the store's refusal.
func (e *NotEmptiedError) Unwrap() error { return e.Cause }

// For maps a classified error to what gardener's reconcilers act on: an error carrying
// gardener error codes (shown in status.lastError.codes) or a *RequeueAfterError, which they
// requeue without exponential back-off. It must be the outermost error an actuator returns,
// because the reconcilers recognise *RequeueAfterError by type assertion, not errors.As.
func For(err error) error {
	if err == nil {
		return nil
	}
	var (
		inProgress *InProgressError
		locked     *LockedObjectsError
		retryAfter *objectstore.RetryAfterError
	)
	switch {
	case errors.As(err, &inProgress):
		return &reconcilerutils.RequeueAfterError{RequeueAfter: ProgressRequeue, Cause: err}
	case errors.As(err, new(*NotEmptiedError)):
		return v1beta1helper.NewErrorWithCodes(err, gardencorev1beta1.ErrorInfraDependencies)
	case errors.As(err, &locked):
		wait := maxLockedRequeue
		if !locked.RetainUntil.IsZero() {
			wait = min(max(time.Until(locked.RetainUntil), time.Minute), maxLockedRequeue)
		}
		return &reconcilerutils.RequeueAfterError{RequeueAfter: wait, Cause: v1beta1helper.NewErrorWithCodes(err, gardencorev1beta1.ErrorInfraDependencies)}
	case errors.Is(err, objectstore.ErrThrottled):
		wait := ThrottledRequeue
		if errors.As(err, &retryAfter) && retryAfter.After > wait {
			wait = retryAfter.After
		}
		return &reconcilerutils.RequeueAfterError{RequeueAfter: wait, Cause: v1beta1helper.NewErrorWithCodes(err, gardencorev1beta1.ErrorInfraRateLimitsExceeded)}
	}
	if codes := Codes(err); len(codes) > 0 {
		return v1beta1helper.NewErrorWithCodes(err, codes...)
	}
	return err
}

// Codes returns the gardener error codes of a classified error.
func Codes(err error) []gardencorev1beta1.ErrorCode {
	switch {
	case errors.Is(err, objectstore.ErrUnauthenticated):
		return []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraUnauthenticated}
	case errors.Is(err, objectstore.ErrForbidden):
		return []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraUnauthorized}
	case errors.Is(err, objectstore.ErrThrottled):
		return []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraRateLimitsExceeded}
	case errors.Is(err, objectstore.ErrQuotaExceeded):
		return []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraQuotaExceeded}
	case errors.Is(err, objectstore.ErrInvalidConfig),
		errors.Is(err, objectstore.ErrOwnedByOther),
		errors.Is(err, objectstore.ErrUnsupported),
		errors.Is(err, objectstore.ErrOutsidePrefix),
		errors.Is(err, objectstore.ErrKeyRefused):
		return []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorConfigurationProblem}
	case errors.Is(err, objectstore.ErrObjectLocked):
		return []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorInfraDependencies}
	case errors.Is(err, objectstore.ErrUnreachable):
		return []gardencorev1beta1.ErrorCode{gardencorev1beta1.ErrorRetryableInfraDependencies}
	}
	return nil
}
