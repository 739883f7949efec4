// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package backupbucket is the provider-neutral BackupBucket controller: one bucket per seed,
// created and converged through the provider's management plane (objectstore.Management),
// emptied through its data plane.
package backupbucket

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener/gardener/extensions/pkg/controller/backupbucket"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// actuator holds only what every request shares; everything of one request lives in its calls.
type actuator struct {
	provider provider.Provider
	reader   client.Reader
	client   client.Client
	recorder events.EventRecorder
	deletion options.DeletionOptions
}

var _ backupbucket.Actuator = (*actuator)(nil)

// NewActuator returns the BackupBucket actuator for p. reader must read secrets from the API
// server (the manager's API reader), not from a cache; c writes the generated secret and status.
func NewActuator(p provider.Provider, reader client.Reader, c client.Client, recorder events.EventRecorder, deletion options.DeletionOptions) backupbucket.Actuator {
	return &actuator{provider: p, reader: reader, client: c, recorder: recorder, deletion: deletion}
}

// Reconcile creates the bucket and converges its settings.
func (a *actuator) Reconcile(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket) error {
	return lasterror.CountOperation(metrics.KindBackupBucket, metrics.OperationReconcile, bb.Name, lasterror.For(a.reconcile(ctx, log, bb)))
}

func (a *actuator) reconcile(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket) error {
	cfg, err := connect.BucketConfig(a.provider, bb)
	if err != nil {
		return err
	}
	mgmt, err := connect.NewManagement(ctx, a.reader, bb.Spec.SecretRef, bb.Spec.Region, cfg)
	if err != nil {
		return err
	}
	ensureErr := mgmt.EnsureBucket(objectstore.WithOperation(ctx, objectstore.OpEnsureBucket), objectstore.Bucket{Name: bb.Name, Region: bb.Spec.Region})
	// A hand-back the store cannot complete yet is a wait of the hand-back, not a failure:
	// condition HandBack says what it waits for (decideHandBack).
	var storeWait *objectstore.HandBackWaitError
	if cfg.HandsBack() && errors.As(ensureErr, &storeWait) {
		log.Info("Bucket is converged, but the store cannot be handed back yet", "bucket", bb.Name, "why", storeWait.Why)
		ensureErr = nil
	} else if ensureErr != nil {
		ensureErr = fmt.Errorf("bucket %q: %w", bb.Name, ensureErr)
		// Settings that do not converge must not stop the credentials' lifecycle while the
		// bucket is there: an OpenStack application credential expires, and without its renewal
		// every shoot's backups would stop. The error is still returned.
		if err := a.probe(ctx, bb); err != nil {
			if rec, _ := connect.FailoverRecordOf(bb); !servesCopy(cfg) && rec == nil {
				return ensureErr
			}
			// The copy is served (copy.serve, or a recorded failover): the primary that cannot be reached must not fail
			// this reconcile; BackupsServedFrom says so (reconcileServe). The copy's secret is
			// recorded here too: else copySecretWatch would ask for reconciles without end.
			seen := a.copySecretSeen(ctx, bb, cfg)
			if err := a.reconcileCopy(ctx, log, bb, cfg); err != nil {
				return errors.Join(ensureErr, err)
			}
			primaryErr, err := a.reconcileServe(ctx, log, bb, cfg, ensureErr)
			return errors.Join(primaryErr, err, a.recordCopy(ctx, log, bb, cfg, seen))
		}
		log.Info("Bucket settings do not converge; its generated credentials are kept current meanwhile", "bucket", bb.Name, "error", ensureErr.Error())
	} else {
		log.Info("Bucket is converged", "bucket", bb.Name, "region", bb.Spec.Region)
	}
	err = a.credentialLifecycle(ctx, log, bb, cfg)
	// The copy bucket's own state is its condition's (CopyBucketReady); only a failed status
	// write is an error of this reconcile. The copy's secret is looked at before it is used
	// (copySecretSeen): a change after that asks for another reconcile (copySecretWatch).
	seen := a.copySecretSeen(ctx, bb, cfg)
	err = errors.Join(err, a.reconcileCopy(ctx, log, bb, cfg))
	err = errors.Join(err, a.recordCopy(ctx, log, bb, cfg, seen))
	// copy.serve: which bucket entries name (BackupsServedFrom). primaryErr is ensureErr, or
	// none while the copy is served and ready: a reachable primary that refuses a setting must
	// not fail the BackupBucket either (gardenlet reconciles no BackupEntry of a failed
	// BackupBucket); BackupsServedFrom's message and the PrimaryNotConverged event say why.
	primaryErr, serveErr := a.reconcileServe(ctx, log, bb, cfg, ensureErr)
	err = errors.Join(err, serveErr)
	// The entry issuer is recorded whether or not the settings converge (the entries issue as
	// long as the bucket is there); its sweeps run on a converged bucket only.
	err = errors.Join(err, a.reconcileEntryIssuers(ctx, log, bb, cfg, ensureErr == nil && err == nil))
	switch {
	case ensureErr == nil && err == nil && cfg.HandsBack():
		return a.handBack(ctx, log, bb, cfg, mgmt, storeWait)
	case !cfg.HandsBack():
		if werr := a.withdrawHandBack(ctx, bb); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	switch {
	case primaryErr == nil:
		return err
	case err != nil:
		return fmt.Errorf("%w; and the generated credentials: %w", primaryErr, err)
	}
	return primaryErr
}

// probe reads the bucket once with the operator's credentials.
func (a *actuator) probe(ctx context.Context, bb *extensionsv1alpha1.BackupBucket) error {
	data, err := connect.NewDataPlane(ctx, a.reader, a.provider, bb.Spec.SecretRef, bb.Spec.Region)
	if err != nil {
		return err
	}
	return data.Probe(objectstore.WithOperation(ctx, objectstore.OpProbe), bb.Name)
}

// Delete empties the bucket with the deletion engine, then deletes it. Objects held by
// retention locks are handed to a lifecycle rule and reported; the deletion is retried when the
// earliest lock expires, never in a tight loop.
func (a *actuator) Delete(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket) error {
	return lasterror.CountOperation(metrics.KindBackupBucket, metrics.OperationDelete, bb.Name, lasterror.For(a.delete(ctx, log, bb)))
}

func (a *actuator) delete(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket) error {
	if err := a.refuseIfInUse(ctx, bb); err != nil {
		return err
	}
	// An invalid providerConfig must not keep a bucket from being deleted: the defaults do.
	cfg, _ := connect.BucketConfig(a.provider, bb)
	data, err := connect.NewDataPlane(ctx, a.reader, a.provider, bb.Spec.SecretRef, bb.Spec.Region)
	if err != nil {
		return err
	}
	mgmt, err := connect.NewManagement(ctx, a.reader, bb.Spec.SecretRef, bb.Spec.Region, cfg)
	if err != nil {
		return err
	}
	res, err := objectstore.DeletePrefix(ctx, data, bb.Name, objectstore.WholeBucket(), a.deletion.DeleteOptions(ctx))
	log.Info("Emptying bucket", "bucket", bb.Name, "deleted", res.Deleted, "locked", res.Locked, "throttled", res.Throttled, "done", res.Done)
	metrics.RecordDeletionPass(metrics.KindBackupBucket, bb, res)
	if err != nil {
		return fmt.Errorf("emptying bucket %q: %w", bb.Name, err)
	}
	if !res.Done {
		return &lasterror.InProgressError{Bucket: bb.Name, Deleted: res.Deleted}
	}
	// Once per completed pass (not per pass of a long emptying): the entries are gone
	// (refuseIfInUse), and so are the objects their principals reached.
	if err := a.sweepDeletedBucket(ctx, log, bb, cfg); err != nil {
		return err
	}
	if res.Locked > 0 {
		_, err := mgmt.DeferDeletion(objectstore.WithOperation(ctx, objectstore.OpDeferDeletion), bb.Name, "")
		if err != nil && !errors.Is(err, objectstore.ErrUnsupported) {
			return fmt.Errorf("deferring the deletion of locked objects in bucket %q: %w", bb.Name, err)
		}
		locked := &lasterror.LockedObjectsError{Bucket: bb.Name, Count: res.Locked, RetainUntil: res.EarliestRetainUntil, Deferred: err == nil}
		if err != nil {
			locked.NotDeferred = err
		}
		return locked
	}
	if err := mgmt.DeleteBucket(objectstore.WithOperation(ctx, objectstore.OpDeleteBucket), bb.Name); err != nil {
		if errors.Is(err, objectstore.ErrBucketNotEmpty) {
			return notEmptied(ctx, data, bb.Name, err)
		}
		return fmt.Errorf("deleting bucket %q: %w", bb.Name, err)
	}
	log.Info("Bucket is deleted", "bucket", bb.Name)
	a.deleteCopy(ctx, log, bb, cfg)
	metrics.DeletionDone(metrics.KindBackupBucket, bb.Name)
	metrics.ForgetBucket(bb.Name)
	return a.dropCredentials(ctx, log, bb, cfg)
}

// notEmptied names what is left in a bucket the store refuses to delete after a complete pass
// emptied it, from one listing page.
func notEmptied(ctx context.Context, store objectstore.DataPlane, bucket string, cause error) error {
	const named = 5
	e := &lasterror.NotEmptiedError{Bucket: bucket, Cause: cause}
	errStop := errors.New("one page is enough")
	err := store.ListObjects(objectstore.WithOperation(ctx, objectstore.OpListObjects), bucket, "", func(page []objectstore.ObjectVersion) error {
		e.Listed = len(page)
		for _, o := range page[:min(named, len(page))] {
			e.First = append(e.First, o.Key)
		}
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return fmt.Errorf("%w (listing what is left failed too: %w)", e, err)
	}
	return e
}
