// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package extstatus

import (
	"context"
	"errors"
	"strings"

	extensionscontroller "github.com/gardener/gardener/extensions/pkg/controller"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
)

// ReportError writes err on obj's status the way gardener's library does (lastOperation Error,
// lastError with err's codes) and emits a warning event with reason, unless the status already
// says it. It is for what the library cannot report because it stops before any actuator runs.
func ReportError(ctx context.Context, log logr.Logger, c client.Client, recorder events.EventRecorder, obj extensionsv1alpha1.Object, reason string, err error) error {
	coded := reconcilerutils.ReconcileErrCauseOrErr(lasterror.For(err))
	status := obj.GetExtensionStatus()
	if last := status.GetLastError(); last != nil && strings.Contains(last.Description, err.Error()) &&
		status.GetLastOperation() != nil && status.GetLastOperation().State == gardencorev1beta1.LastOperationStateError {
		return nil
	}
	recorder.Eventf(obj, nil, corev1.EventTypeWarning, reason, "Reconcile", "%v", err)
	meta := metav1.ObjectMeta{Annotations: obj.GetAnnotations(), DeletionTimestamp: obj.GetDeletionTimestamp()}
	opType := v1beta1helper.ComputeOperationType(meta, status.GetLastOperation())
	if uerr := extensionscontroller.NewStatusUpdater(c).Error(ctx, log, obj, coded, opType, "Error"); uerr != nil {
		return errors.Join(err, uerr)
	}
	return nil
}
