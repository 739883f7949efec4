// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// ReasonCopyPrefixDeleted is the event of an entry's prefix deleted in the copy bucket.
const ReasonCopyPrefixDeleted = "CopyPrefixDeleted"

// deleteCopyPrefix deletes prefix, the entry's, in the copy bucket its config declares (none: done),
// with the copy's credentials, exactly as the primary's (objectstore.DeletePrefix: every version
// under the prefix and nothing else, a complete pass verified by its listing), locked objects
// deferred to the copy store's rule. The entry's finalizer stays until both are done: the copy
// would otherwise keep a deleted shoot's snapshots that nobody owns. A copy bucket that does not
// exist holds nothing of the entry.
func (d *delegate) deleteCopyPrefix(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, prefix objectstore.Prefix) error {
	cfg, _ := connect.EntryConfig(d.provider, be) // invalid: the seed configuration's copy applies
	place, err := connect.CopyPlaceOf(d.provider, cfg, be.Spec.BucketName)
	if err != nil || place == nil {
		return err
	}
	data, err := place.NewDataPlane(ctx, d.reader, d.provider)
	if err != nil {
		return fmt.Errorf("deleting prefix %q in the copy bucket %q: %w", prefix.String(), place.Bucket, err)
	}
	opts := d.deletion.DeleteOptions(ctx)
	opts.Budget = objectstore.SharedBudget(BudgetKey(d.provider.Type(), place.Region, place.Bucket), opts.Parallelism)
	res, err := objectstore.DeletePrefix(ctx, data, place.Bucket, prefix, opts)
	log.Info("Deleting backup entry prefix in the copy bucket", "bucket", place.Bucket, "prefix", prefix.String(),
		"deleted", res.Deleted, "locked", res.Locked, "throttled", res.Throttled, "done", res.Done)
	switch {
	case errors.Is(err, objectstore.ErrBucketNotFound):
		log.Info("Copy bucket does not exist: nothing of the entry is there", "bucket", place.Bucket)
		return nil
	case err != nil:
		return fmt.Errorf("deleting prefix %q in the copy bucket %q: %w", prefix.String(), place.Bucket, err)
	case !res.Done:
		return &lasterror.InProgressError{Bucket: place.Bucket, Prefix: prefix.String(), Deleted: res.Deleted}
	}
	if res.Locked > 0 {
		mgmt, err := place.NewManagement(ctx, d.reader)
		if err != nil {
			return fmt.Errorf("deferring the deletion of %d locked objects under %q in the copy bucket %q: %w", res.Locked, prefix.String(), place.Bucket, err)
		}
		deferral, err := mgmt.DeferDeletion(objectstore.WithOperation(ctx, objectstore.OpDeferDeletion), place.Bucket, prefix.String())
		if errors.Is(err, objectstore.ErrUnsupported) {
			return &lasterror.LockedObjectsError{Bucket: place.Bucket, Prefix: prefix.String(), Count: res.Locked, RetainUntil: res.EarliestRetainUntil, NotDeferred: err}
		}
		if err != nil {
			return fmt.Errorf("deferring the deletion of %d locked objects under %q in the copy bucket %q: %w", res.Locked, prefix.String(), place.Bucket, err)
		}
		metrics.CountDeferred(metrics.KindBackupEntry, res.Locked)
		d.recorder.Eventf(be, nil, corev1.EventTypeWarning, ReasonLockedObjectsDeferred, "Delete",
			"%d object versions under %q in the copy bucket %q are held by retention locks %s; their deletion is deferred to the store's %s (%s), which deletes them when the locks expire",
			res.Locked, prefix.String(), place.Bucket, lockSpan(res), deferral.Rule, deferral.Verification())
	}
	d.recorder.Eventf(be, nil, corev1.EventTypeNormal, ReasonCopyPrefixDeleted, "Delete",
		"Deleted the objects under %q in the copy bucket %q (%d in the last pass)", prefix.String(), place.Bucket, res.Deleted)
	return nil
}
