package controller

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
