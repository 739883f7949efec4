// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/gardener/gardener/pkg/controllerutils"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// holdingActuator is gardener's generic actuator with this extension's finalizer: set on every
// reconcile and restore, removed only when the deletion of the prefix succeeded or the entry was
// migrated away (its objects then belong to the destination seed).
type holdingActuator struct {
	backupentry.Actuator

	// manager gives gardener's generic actuator, built anew for each reconcile and restore pass
	// (pass), its client.
	manager manager.Manager
	client  client.Client
	// reader reads the entry's BackupBucket from the API server, not the cache: a cache that has
	// not seen a hand-back yet must not give the entry the finalizer the hand-back removed.
	reader   client.Reader
	provider provider.Provider
	// entries is the delegate, whose creds give entries their own credentials.
	entries *delegate
}

var _ backupentry.Actuator = (*holdingActuator)(nil)

// hold gives the entry entryinfo.FinalizerName unless its bucket is handed back (then it removes
// it): handBack is set and the hand-back is complete (entryinfo.HandedBack). While a hand-back
// waits, this extension is still in charge of the entry, and holds it.
//
// Adding cannot race with a hand-back: the bucket is read from the API server before the add
// and again after it. A hand-back completed after the second read starts its release
// (ReleaseEntriesOf, which lists the entries from the API server, after the condition is True)
// after the add, so it finds the finalizer and removes it; one completed before it is seen here
// and the finalizer is removed again.
func (a *holdingActuator) hold(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	handedBack, err := a.handedBack(ctx, be)
	if err != nil {
		return err
	}
	if handedBack {
		return a.release(ctx, be)
	}
	if controllerutil.ContainsFinalizer(be, entryinfo.FinalizerName) {
		return nil
	}
	if err := controllerutils.AddFinalizers(ctx, a.client, be, entryinfo.FinalizerName); err != nil {
		return fmt.Errorf("adding finalizer %s: %w", entryinfo.FinalizerName, err)
	}
	if handedBack, err = a.handedBack(ctx, be); err != nil || !handedBack {
		return err
	}
	return a.release(ctx, be)
}

// handedBack reports whether the entry's BackupBucket, on this seed, is handed back
// (providerConfig handBack, and the hand-back complete: entryinfo.HandedBack), read from the API
// server. A bucket that is not on this seed is not;
// a bucket that cannot be read or whose providerConfig does not decode (the provider awaiting the
// seed's configuration included, *provider.SeedConfigPendingError) is an error, so that the entry
// is held or released only on what was read and understood.
func (a *holdingActuator) handedBack(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (bool, error) {
	if a.provider == nil || be.Spec.BucketName == "" {
		return false, nil
	}
	bb := &extensionsv1alpha1.BackupBucket{}
	if err := a.reader.Get(ctx, client.ObjectKey{Name: be.Spec.BucketName}, bb); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading BackupBucket %q to learn whether it is handed back: %w", be.Spec.BucketName, err)
	}
	cfg, err := connect.BucketConfig(a.provider, bb)
	if err != nil {
		return false, fmt.Errorf("decoding BackupBucket %q to learn whether it is handed back: %w", be.Spec.BucketName, err)
	}
	return cfg.HandsBack() && entryinfo.HandedBack(bb), nil
}

// release removes entryinfo.FinalizerName (entryinfo.Release).
func (a *holdingActuator) release(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	return entryinfo.Release(ctx, a.client, be)
}

// Reconcile implements backupentry.Actuator.
func (a *holdingActuator) Reconcile(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	pass, o, etcd := a.pass()
	err := a.entries.creds.Settle(ctx, log, be, o, a.holdThen(ctx, log, be, pass.Reconcile))
	if err == nil {
		err = a.recordEtcdDecided(ctx, be, etcd)
	}
	return observe(be, metrics.OperationReconcile, err)
}

// Restore implements backupentry.Actuator.
func (a *holdingActuator) Restore(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	pass, o, etcd := a.pass()
	err := a.entries.creds.Settle(ctx, log, be, o, a.holdThen(ctx, log, be, pass.Restore))
	if err == nil {
		err = a.recordEtcdDecided(ctx, be, etcd)
	}
	return observe(be, metrics.OperationRestore, err)
}

// pass is gardener's generic actuator for one reconcile or restore pass, whose delegate
// (entryPass) fills the pass's outcome: nothing of a pass is kept on the shared actuator.
func (a *holdingActuator) pass() (backupentry.Actuator, *entrycredentials.Outcome, *etcdDecided) {
	o, etcd := &entrycredentials.Outcome{}, &etcdDecided{}
	return genericactuator.NewActuator(a.manager, &entryPass{delegate: a.entries, outcome: o, etcd: etcd}), o, etcd
}

// holdThen holds the entry, then runs the library's operation on it.
func (a *holdingActuator) holdThen(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, op func(context.Context, logr.Logger, *extensionsv1alpha1.BackupEntry) error) error {
	if err := a.hold(ctx, be); err != nil {
		return err
	}
	return op(ctx, log, be)
}

// Delete implements backupentry.Actuator.
func (a *holdingActuator) Delete(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	if err := a.entries.creds.KeepForDeletion(ctx, be); err != nil {
		return observe(be, metrics.OperationDelete, err)
	}
	if err := a.Actuator.Delete(ctx, log, be); err != nil {
		return observe(be, metrics.OperationDelete, err)
	}
	// The entry's own credentials go once its objects are gone (the deletion used the bucket's).
	if err := a.entries.creds.RevokeDeleted(ctx, log, be); err != nil {
		return observe(be, metrics.OperationDelete, err)
	}
	return observe(be, metrics.OperationDelete, a.release(ctx, be))
}

// Migrate implements backupentry.Actuator.
func (a *holdingActuator) Migrate(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	if err := a.Actuator.Migrate(ctx, log, be); err != nil {
		return observe(be, metrics.OperationMigrate, err)
	}
	if err := a.entries.creds.RetireMigrated(ctx, be); err != nil {
		return observe(be, metrics.OperationMigrate, err)
	}
	return observe(be, metrics.OperationMigrate, a.release(ctx, be))
}

func observe(be *extensionsv1alpha1.BackupEntry, operation string, err error) error {
	return lasterror.CountOperation(metrics.KindBackupEntry, operation, be.Name, err)
}
