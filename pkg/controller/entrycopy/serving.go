// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycopy

import (
	"context"
	"fmt"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
)

// servingFromCopy pauses the copy of an entry whose shoot writes the copy bucket: copy.serve is
// copy (connect.DecideServe, as the BackupEntry's delegate decides it), the shoot's Etcd names
// the copy bucket and its etcd-backup holds the copy's credentials (connect.Served.WritesCopy: the
// two-phase switch is done; until then, while gardenlet has not rolled the Etcd, a missing copy
// secret or an unreadable copy bucket, the shoot still writes the primary and the copy goes on). Paused, the shoot's etcd-backup-restore writes the copy itself, and its
// garbage collection deletes there what a copy from the old primary would bring back.
// BackupsCopied says so (Unknown ServingFromCopy: there is no second copy now) and the lag series
// goes. It says whether the entry is served from the copy, and else what BackupsCopied's message
// adds while the switch is pending ("": none).
func (c *copier) servingFromCopy(ctx context.Context, be *extensionsv1alpha1.BackupEntry, place *connect.CopyPlace) (bool, string, error) {
	if serves, err := connect.ServesCopy(ctx, c.Reader, place, be.Spec.BucketName); !serves || err != nil {
		return false, "", err
	}
	served, err := connect.ServedOf(ctx, c.Reader, c.Provider, be)
	if err != nil || !served.Plan.FromCopy {
		return false, "", err
	}
	if !served.WritesCopy {
		why := "copy.serve is copy"
		if served.Plan.Reason == connect.ServeReasonCopyByPolicy {
			why = "An automatic failover is recorded (copy.failover)"
		}
		return false, fmt.Sprintf(" %s, but the shoot does not write the copy bucket %q yet (its Etcd must name it and its etcd-backup hold the copy's credentials; see the BackupEntry's events): the switch is pending, the shoot still writes bucket %q, and the copy goes on.", why, place.Bucket, be.Spec.BucketName), nil
	}
	metrics.EntryCopyLag.DeletePartialMatch(map[string]string{"entry": be.Name})
	v := verdict{status: gardencorev1beta1.ConditionUnknown, reason: ReasonServingFromCopy,
		message: fmt.Sprintf("Nothing is copied: %s The shoot writes its snapshots there; there is no second copy until copy.serve is primary again.", served.Plan.Message)}
	if old := v1beta1helper.GetCondition(be.Status.Conditions, ConditionBackupsCopied); old != nil && old.Status == v.status && old.Reason == v.reason && old.Message == v.message {
		return true, "", nil // written once: nothing is measured while paused
	}
	return true, "", c.publish(ctx, be, &v)
}
