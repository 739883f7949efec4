// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinfo

import (
	"context"
	"fmt"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/reconciled"
)

// ConditionEntryCredentials on a BackupEntry says what the credential in its etcd-backup secret
// reaches (the BackupEntry controller sets it; the BackupBucket's headroom look reads it).
const ConditionEntryCredentials gardencorev1beta1.ConditionType = "EntryCredentials"

// ReasonBucketWideAtQuota says the entry's own credential could not be issued at the store's quota,
// and allowBucketCredentialAtQuota published the bucket's until there is room again.
const ReasonBucketWideAtQuota = "BucketWideAtQuota"

// RequestEntriesAtQuota asks for a reconcile (the operation annotation, as gardenlet sets it) of
// at most limit BackupEntries of bucket whose etcd-backup secret holds the bucket's credential
// because the store's quota refused their own (EntryCredentials False/BucketWideAtQuota): the
// bucket's headroom look calls it when the store has room again, so that such an entry is
// upgraded to its own credential by itself. gardener's controller admits an update with the
// annotation and removes it when it picks the entry up (gardener v1.150.0
// extensions/pkg/predicate/default.go:64, pkg/controllerutils/reconciler/operation_annotation_wrapper.go:47-51),
// unless the controller runs with IgnoreOperationAnnotation; an entry that has it already counts as asked (its pass is still to come),
// so that no more entries try than there is room for. It reads the API server in pages and
// returns how many entries are asked.
func RequestEntriesAtQuota(ctx context.Context, c client.Client, reader client.Reader, bucket string, limit int) (int, error) {
	asked := 0
	list := &extensionsv1alpha1.BackupEntryList{}
	opts := []client.ListOption{client.Limit(500)}
	for asked < limit {
		if err := reader.List(ctx, list, opts...); err != nil {
			return asked, fmt.Errorf("listing the seed's BackupEntries of bucket %q: %w", bucket, err)
		}
		for i := range list.Items {
			be := &list.Items[i]
			cond := v1beta1helper.GetCondition(be.Status.Conditions, ConditionEntryCredentials)
			if asked >= limit || be.Spec.BucketName != bucket || be.DeletionTimestamp != nil || cond == nil || cond.Reason != ReasonBucketWideAtQuota {
				continue
			}
			if be.Annotations[v1beta1constants.GardenerOperation] != "" {
				asked++ // asked already (or another operation is due): that pass tries again
				continue
			}
			if err := reconciled.RequestReconcile(ctx, c, be); client.IgnoreNotFound(err) != nil {
				return asked, fmt.Errorf("asking for a reconcile of BackupEntry %s to issue its own credential: %w", be.Name, err)
			}
			asked++
		}
		if list.Continue == "" {
			break
		}
		opts = []client.ListOption{client.Limit(500), client.Continue(list.Continue)}
	}
	return asked, nil
}
