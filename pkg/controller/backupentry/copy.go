// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// ReasonCopyPrefixDeleted is the event of an entry's prefix deleted in the copy bucket.
const ReasonCopyPrefixDeleted = "CopyPrefixDeleted"

// copyPassMargin is added to connect.CopyPassDeadline for the clocks of the entry copy's replica
// and of the API server that set the entry's deletionTimestamp, the lag of the cache a pass
// starts from, and the entry copy's look at the entry (at most 10 s) during which a snapshot read
// whole before its pass's deadline may still send its commit. The bound is on when a commit is
// sent: a commit request sent just before it (aws's CompleteMultipartUpload, gcs's last chunk,
// azure's Put Block List) may be stored by the store a little later.
const copyPassMargin = 30 * time.Second

// CopyPassWaitError reports an entry's deletion that waits, before it deletes in the copy bucket,
// until a pass of the entry copy that began before the entry's deletionTimestamp can send no
// more commits (connect.CopyPassDeadline after it, plus copyPassMargin): such a pass would
// otherwise write a snapshot into the copy after the copy's prefix was emptied, and nobody would
// delete it. The pass itself may still run then (a snapshot streamed past its deadline), but
// its commits need a look that finds the entry live, which a deleted entry never passes.
type CopyPassWaitError struct {
	Bucket, Prefix string
	Until          time.Time
}

func (e *CopyPassWaitError) Error() string {
	return fmt.Sprintf("deleting prefix %q in the copy bucket %q waits until %s: a pass of the entry copy begun before the deletion may still write there until then",
		e.Prefix, e.Bucket, e.Until.UTC().Format(time.RFC3339))
}

// forDeletion is lasterror.For for a deletion's error, with a *CopyPassWaitError requeued when its
// wait ends (now: the delegate's clock).
func forDeletion(err error, now time.Time) error {
	var wait *CopyPassWaitError
	if errors.As(err, &wait) {
		return &reconcilerutils.RequeueAfterError{RequeueAfter: max(wait.Until.Sub(now), time.Second), Cause: err}
	}
	return lasterror.For(err)
}

// deleteCopyPrefix deletes prefix, the entry's, in the copy bucket its config declares (none: done),
// with the copy's credentials, exactly as the primary's (objectstore.DeletePrefix: every version
// under the prefix and nothing else, a complete pass verified by its listing), locked objects
// deferred to the copy store's rule. The entry's finalizer stays until both are done: the copy
// would otherwise keep a deleted shoot's snapshots that nobody owns. A copy bucket that does not
// exist holds nothing of the entry.
//
// A migration's source- entry deletes nothing in a copy: its prefix is the live entry's, which
// owns it in the copy (the entry copy copies no source- entry), and a copy bucket named
// explicitly (copy.bucketName) is shared by both seeds, so deleting there would delete the live
// entry's copies. A copy of the source seed's bucket keeps what was copied before the migration:
// the operator's to remove.
//
// The deletion waits until no pass of the entry copy begun before the entry's deletionTimestamp
// can still write (CopyPassWaitError). A seed configuration not yet read stops the deletion
// (*provider.SeedConfigPendingError): taken for "no copy", it would end the deletion with the
// copy's prefix untouched. An entry's providerConfig invalid for another reason: the seed
// configuration's copy applies (Decode returns it with the error).
func (d *delegate) deleteCopyPrefix(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, prefix objectstore.Prefix) error {
	if entryinfo.IsSourceEntry(be) {
		return nil
	}
	cfg, err := connect.EntryConfig(d.provider, be)
	if pending := (*provider.SeedConfigPendingError)(nil); errors.As(err, &pending) {
		return fmt.Errorf("deleting prefix %q in the copy bucket: %w", prefix.String(), err)
	}
	place, err := connect.CopyPlaceOf(d.provider, cfg, be.Spec.BucketName)
	if err != nil || place == nil || place.IsBucket(be.Spec.BucketName) {
		return err // a copy bucket that is the primary is none (the BackupBucket refuses it)
	}
	deleted := d.now()
	if be.DeletionTimestamp != nil {
		deleted = be.DeletionTimestamp.Time
	}
	if until := deleted.Add(connect.CopyPassDeadline + copyPassMargin); d.now().Before(until) {
		return &CopyPassWaitError{Bucket: place.Bucket, Prefix: prefix.String(), Until: until}
	}
	data, err := place.NewDataPlane(ctx, d.reader, d.provider)
	if err != nil {
		return fmt.Errorf("deleting prefix %q in the copy bucket %q: %w", prefix.String(), place.Bucket, err)
	}
	opts := d.deletion.DeleteOptions(ctx)
	opts.Budget = objectstore.SharedBudget(BudgetKey(place.Provider.Type(), place.Region, place.Bucket), opts.Parallelism)
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
