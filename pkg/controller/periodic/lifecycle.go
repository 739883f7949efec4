// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package periodic

import (
	"context"
	"fmt"
	"reflect"
	"time"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/reconciled"
)

// ReasonDeleting is the reason (Unknown) of a periodic controller's verdict on an object being
// deleted: it is no longer looked at.
const ReasonDeleting = "Deleting"

// Lifecycle is what one periodic controller publishes on its objects, which must not outlive
// its looks, and how Reconcile takes it back:
//   - an object gone: Gone(name);
//   - the controller switched off (interval 0): Forget(name), every condition of Conditions
//     removed and Drop applied, on every look (at the start, and on spec or operation changes);
//   - an object being deleted: Forget(name), Conditions[0] (the verdict) turned Unknown/Deleting
//     with the message Deleting gives where the object has it, the other Conditions removed; the
//     controller's other status stays, dated;
//   - an object Skip names: Forget(name), nothing else.
type Lifecycle[T extensionsv1alpha1.Object] struct {
	// Conditions are the condition types the controller writes, its verdict first.
	Conditions []gardencorev1beta1.ConditionType
	// Deleting is the verdict's message while obj is being deleted.
	Deleting func(obj T) string
	// DeletingEvent, if set, is the reason of a Normal event when the verdict turns so.
	DeletingEvent string
	// Drop removes the controller's part of the object's status besides its conditions and
	// reports whether it changed anything (nil: it has none).
	Drop func(obj T) bool
	// Forget drops the object's metric series the controller sets.
	Forget func(name string)
	// Gone drops what the process keeps of an object that is gone (nil: Forget).
	Gone func(name string)
	// Skip names objects the controller never looks at (nil: none).
	Skip func(obj T) bool
}

// Reconcile is every periodic controller's reconcile: it reads req's object into obj and, by
// l, forgets it when it is gone, withdraws what the controller published when interval is 0
// (switched off), marks it while it is being deleted, and forgets it when l skips it; any
// other object it hands to look, the controller's own part.
func Reconcile[T extensionsv1alpha1.Object](ctx context.Context, d Deps, req reconcile.Request, obj T, interval time.Duration, l Lifecycle[T],
	look func(context.Context, T) (reconcile.Result, error)) (reconcile.Result, error) {
	gone := l.Gone
	if gone == nil {
		gone = l.Forget
	}
	if found, err := reconciled.GetOrForget(ctx, d.Client, req, obj, gone); !found {
		return reconcile.Result{}, err
	}
	switch {
	case interval <= 0:
		return reconcile.Result{}, l.withdraw(ctx, d, obj)
	case obj.GetDeletionTimestamp() != nil:
		return reconcile.Result{}, l.markDeleting(ctx, d, obj)
	case l.Skip != nil && l.Skip(obj):
		l.Forget(obj.GetName())
		return reconcile.Result{}, nil
	}
	return look(ctx, obj)
}

// withdraw removes what the controller published on obj: it is switched off, and nothing would
// refresh it.
func (l Lifecycle[T]) withdraw(ctx context.Context, d Deps, obj T) error {
	l.Forget(obj.GetName())
	err := extstatus.Patch(ctx, d.Client, d.Reader, obj, func(obj T) bool {
		changed := l.remove(obj, l.Conditions)
		if l.Drop != nil && l.Drop(obj) {
			changed = true
		}
		return changed
	})
	if err = client.IgnoreNotFound(err); err != nil { // gone meanwhile: nothing left to withdraw
		return fmt.Errorf("withdrawing %s of %s %s (switched off): %w", l.Conditions[0], kindOf(obj), obj.GetName(), err)
	}
	return nil
}

// markDeleting turns the verdict on an object being deleted into Unknown/Deleting, where it has
// one, and removes the controller's other conditions: nobody checks what they claim any more.
func (l Lifecycle[T]) markDeleting(ctx context.Context, d Deps, obj T) error {
	l.Forget(obj.GetName())
	message := l.Deleting(obj)
	marked := false
	err := extstatus.Patch(ctx, d.Client, d.Reader, obj, func(obj T) bool {
		changed := l.remove(obj, l.Conditions[1:])
		st := obj.GetExtensionStatus()
		old := v1beta1helper.GetCondition(st.GetConditions(), l.Conditions[0])
		if old == nil || (old.Status == gardencorev1beta1.ConditionUnknown && old.Reason == ReasonDeleting) {
			return changed
		}
		conditions, _ := extstatus.SetCondition(st.GetConditions(), l.Conditions[0], gardencorev1beta1.ConditionUnknown, ReasonDeleting, message, d.Now())
		st.SetConditions(conditions)
		marked = true
		return true
	})
	if err = client.IgnoreNotFound(err); err != nil { // gone meanwhile: nothing left to mark
		return fmt.Errorf("setting %s of %s %s being deleted: %w", l.Conditions[0], kindOf(obj), obj.GetName(), err)
	}
	if marked && l.DeletingEvent != "" {
		d.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, l.DeletingEvent, string(l.Conditions[0]), "%s", extstatus.EventNote(message))
	}
	return nil
}

// remove removes the conditions of types from obj and reports whether it had any.
func (l Lifecycle[T]) remove(obj T, types []gardencorev1beta1.ConditionType) bool {
	st := obj.GetExtensionStatus()
	changed := false
	for _, t := range types {
		if v1beta1helper.GetCondition(st.GetConditions(), t) != nil {
			st.SetConditions(v1beta1helper.RemoveConditions(st.GetConditions(), t))
			changed = true
		}
	}
	return changed
}

// kindOf is obj's kind for a message, e.g. "BackupEntry" (a typed object's TypeMeta may be
// empty).
func kindOf(obj client.Object) string {
	return reflect.TypeOf(obj).Elem().Name()
}
