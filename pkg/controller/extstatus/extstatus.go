// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package extstatus writes the status of extension objects: conditions merged with optimistic
// locking beside other writers, errors reported the way gardener's library does, event notes the
// API server accepts.
package extstatus

import (
	"context"
	"time"
	"unicode/utf8"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Patch applies mutate to obj's status and patches it with optimistic locking, so that
// writers of different conditions (the actuator, the probe, the inventory) never drop each
// other's: on a conflict a copy is read again from reader (the API server) and mutate applied
// anew. obj itself is never replaced by what was read (gardener's library reports obj's
// generation as observed: a newer spec read here must not pass for reconciled); on success mutate
// is applied to it too. mutate returns false when nothing needs writing.
func Patch[T client.Object](ctx context.Context, c client.Client, reader client.Reader, obj T, mutate func(T) bool) error {
	work := obj.DeepCopyObject().(T)
	first := true
	changed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := reader.Get(ctx, client.ObjectKeyFromObject(work), work); err != nil {
				return err
			}
		}
		first = false
		base := work.DeepCopyObject().(T)
		if changed = mutate(work); !changed {
			return nil
		}
		return c.Status().Patch(ctx, work, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	})
	if err == nil && changed {
		mutate(obj)
	}
	return err
}

// SetCondition merges a condition of type t into conditions at now: LastTransitionTime moves only
// when the status changes; LastUpdateTime always. It returns the previous condition (nil if none).
func SetCondition(conditions []gardencorev1beta1.Condition, t gardencorev1beta1.ConditionType, status gardencorev1beta1.ConditionStatus, reason, message string, now time.Time) ([]gardencorev1beta1.Condition, *gardencorev1beta1.Condition) {
	old := v1beta1helper.GetCondition(conditions, t)
	if old != nil {
		old = old.DeepCopy()
	}
	ts := metav1.NewTime(now)
	cond := gardencorev1beta1.Condition{Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: ts, LastUpdateTime: ts}
	if old != nil && old.Status == status {
		cond.LastTransitionTime = old.LastTransitionTime
	}
	return v1beta1helper.MergeConditions(conditions, cond), old
}

// Succeeded reports whether obj's last operation succeeded.
func Succeeded(obj extensionsv1alpha1.Object) bool {
	last := obj.GetExtensionStatus().GetLastOperation()
	return last != nil && last.State == gardencorev1beta1.LastOperationStateSucceeded
}

// maxEventNote is the longest note the API server accepts on an event (events.k8s.io/v1: 1 kB).
const maxEventNote = 1024

// EventNote is msg cut to what an event's note may hold, on a rune boundary and marked as cut:
// a longer note makes the API server refuse the whole event, silently for the recorder.
func EventNote(msg string) string {
	if len(msg) <= maxEventNote {
		return msg
	}
	const more = " [...]"
	cut := maxEventNote - len(more)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + more
}
