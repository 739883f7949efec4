// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package predicates holds the event filters of the controllers beside the actuators.
package predicates

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// NotSucceeded passes extension objects that are being deleted or whose last operation did not
// succeed: where a missing credentials secret can be the reason. Objects at rest pass nothing, so
// a seed's thousands of converged entries cost no secret reads.
func NotSucceeded() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool {
		ext, ok := obj.(extensionsv1alpha1.Object)
		if !ok {
			return false
		}
		last := ext.GetExtensionStatus().GetLastOperation()
		return obj.GetDeletionTimestamp() != nil || last == nil || last.State != gardencorev1beta1.LastOperationStateSucceeded
	})
}

// SpecOrOperationChanged passes new objects, deletions and changes of the spec or of the last
// operation (a reconcile since the last look may have changed credentials or created the bucket),
// not the status writes of the probe or the inventory themselves.
func SpecOrOperationChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldObj, ok1 := e.ObjectOld.(extensionsv1alpha1.Object)
			newObj, ok2 := e.ObjectNew.(extensionsv1alpha1.Object)
			if !ok1 || !ok2 {
				return false
			}
			oldOp, newOp := oldObj.GetExtensionStatus().GetLastOperation(), newObj.GetExtensionStatus().GetLastOperation()
			return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
				e.ObjectNew.GetDeletionTimestamp() != nil ||
				(oldOp == nil) != (newOp == nil) ||
				(newOp != nil && (oldOp.State != newOp.State || !oldOp.LastUpdateTime.Equal(&newOp.LastUpdateTime)))
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
