// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryinfo

import (
	"context"
	"fmt"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/gardener/gardener/pkg/controllerutils"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// FinalizerName keeps a BackupEntry until the objects under its prefix are deleted. Gardener's
// library removes its own finalizer without deleting anything when the entry's credentials
// secret is gone; this one stays until the prefix is deleted with other credentials (the entry
// controller's orphan guard), the entry's bucket is handed back to the provider extension this
// project took it over from (providerConfig handBack, once the hand-back is complete, HandedBack:
// that extension deletes the entry without this finalizer, so it must not wait for it; see
// ReleaseEntriesOf), or an operator removes it on purpose.
const FinalizerName = "backup.extensions.gardener.cloud/objects"

// ConditionHandBack is the BackupBucket condition that says where the bucket's hand-back is
// (written by the BackupBucket controller; True once it is complete).
const ConditionHandBack gardencorev1beta1.ConditionType = "HandBack"

// ReasonHandBackReleasing is the reason of ConditionHandBack while the bucket, with nothing of
// this extension left valid, releases its entries (ReleaseEntriesOf); True follows once they are.
const ReasonHandBackReleasing = "ReleasingEntries"

// HandedBack says whether bb's hand-back is complete, or releasing its entries (condition
// ConditionHandBack True, or ReasonHandBackReleasing): written before ReleaseEntriesOf lists the
// entries, so an entry that adds FinalizerName meanwhile either sees it after its add or is
// found by the listing. Until then this extension is in charge of the bucket's entries, and an
// entry deleted meanwhile needs FinalizerName as much as before: the hand-back may wait for days
// (a store's retention), and without it an entry whose secret went first would be removed with
// its objects and its own credential left behind.
func HandedBack(bb *extensionsv1alpha1.BackupBucket) bool {
	c := v1beta1helper.GetCondition(bb.Status.Conditions, ConditionHandBack)
	return c != nil && (c.Status == gardencorev1beta1.ConditionTrue || c.Reason == ReasonHandBackReleasing)
}

// ReleaseEntriesOf removes FinalizerName from every BackupEntry on the seed that names bucket in
// spec.bucketName: the bucket is handed back, and the provider extension that takes it back
// deletes its entries without this finalizer. It reads the API server in pages and returns how
// many entries it released.
func ReleaseEntriesOf(ctx context.Context, c client.Client, reader client.Reader, bucket string) (int, error) {
	released := 0
	list := &extensionsv1alpha1.BackupEntryList{}
	opts := []client.ListOption{client.Limit(500)}
	for {
		if err := reader.List(ctx, list, opts...); err != nil {
			return released, fmt.Errorf("listing the seed's BackupEntries of bucket %q: %w", bucket, err)
		}
		for i := range list.Items {
			be := &list.Items[i]
			if be.Spec.BucketName != bucket || !controllerutil.ContainsFinalizer(be, FinalizerName) {
				continue
			}
			if err := Release(ctx, c, be); err != nil {
				return released, fmt.Errorf("BackupEntry %s: %w", be.Name, err)
			}
			released++
		}
		if list.Continue == "" {
			return released, nil
		}
		opts = []client.ListOption{client.Limit(500), client.Continue(list.Continue)}
	}
}

// Release removes FinalizerName from be. A conflict (the library or gardenlet wrote the entry meanwhile,
// as during a migration) is retried on the entry read anew, instead of failing the operation
// that succeeded and showing an error until the next attempt.
func Release(ctx context.Context, c client.Client, be *extensionsv1alpha1.BackupEntry) error {
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !controllerutil.ContainsFinalizer(be, FinalizerName) {
			return nil
		}
		err := controllerutils.RemoveFinalizers(ctx, c, be, FinalizerName)
		if apierrors.IsConflict(err) {
			if gerr := c.Get(ctx, client.ObjectKeyFromObject(be), be); gerr != nil {
				return client.IgnoreNotFound(gerr)
			}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("removing finalizer %s: %w", FinalizerName, err)
	}
	return nil
}
