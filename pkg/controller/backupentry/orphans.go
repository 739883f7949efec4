// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupentry

import (
	"context"
	"errors"
	"fmt"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/gardener/gardener/pkg/controllerutils"
	predicateutils "github.com/gardener/gardener/pkg/controllerutils/predicate"
	reconcilerutils "github.com/gardener/gardener/pkg/controllerutils/reconciler"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/predicates"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/reconciled"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/secrets"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Event reasons of the orphan guard.
const (
	ReasonSecretMissing                 = "CredentialsSecretMissing"
	ReasonPrefixDeletedWithBucketSecret = "PrefixDeletedWithBucketCredentials"
	ReasonObjectsKept                   = "ObjectsKept"
	ReasonDeletionWithBucketSecret      = "DeletionWithBucketCredentialsFailed"
)

// OrphanError reports an entry whose objects cannot be deleted because its credentials are gone
// and its bucket's cannot stand in. It matches objectstore.ErrInvalidConfig.
type OrphanError struct {
	Entry, Bucket, Prefix string
	Secret                corev1.SecretReference
	Why                   string
}

func (e *OrphanError) Error() string {
	return fmt.Sprintf("spec.secretRef: the objects under %q in bucket %q cannot be deleted: credentials secret %s/%s is gone and %s; "+
		"they are kept, and so is this BackupEntry (finalizer %s): restore the secret, or remove the finalizer to leave the objects in the bucket for good",
		e.Prefix, e.Bucket, e.Secret.Namespace, e.Secret.Name, e.Why, entryinfo.FinalizerName)
}

// Is makes errors.Is(err, objectstore.ErrInvalidConfig) true.
func (e *OrphanError) Is(target error) bool { return target == objectstore.ErrInvalidConfig }

// orphanGuard acts where gardener's library stops at a missing credentials secret: it reports it
// on the entry's status, and when the library has given up a deletion (it removes its finalizer
// without deleting anything), deletes the prefix with the BackupBucket's credentials, or keeps the
// entry and says why.
type orphanGuard struct {
	client   client.Client
	reader   client.Reader
	recorder events.EventRecorder
	deleter  *delegate
	clock    clock.PassiveClock // times the settling (nil: the real clock)
}

func addOrphanGuard(mgr manager.Manager, p provider.Provider, d *delegate, opts options.AddOptions) error {
	return builder.ControllerManagedBy(mgr).
		Named("backupentry-orphans-"+p.Type()).
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: 1, SkipNameValidation: opts.Controller.SkipNameValidation}).
		For(&extensionsv1alpha1.BackupEntry{}, builder.WithPredicates(predicateutils.HasType(p.Type()), predicateutils.HasClass(opts.ExtensionClasses...), predicates.NotSucceeded())).
		Complete(&orphanGuard{client: mgr.GetClient(), reader: mgr.GetAPIReader(), recorder: d.recorder, deleter: d, clock: clock.RealClock{}})
}

// now is the guard's clock's time.
func (g *orphanGuard) now() time.Time {
	if g.clock == nil {
		return time.Now()
	}
	return g.clock.Now()
}

// Reconcile implements reconcile.Reconciler.
func (g *orphanGuard) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	be := &extensionsv1alpha1.BackupEntry{}
	if found, err := reconciled.GetOrForget(ctx, g.client, req, be, nil); !found {
		return reconcile.Result{}, err
	}
	if be.DeletionTimestamp == nil {
		switch {
		case be.Status.LastOperation == nil:
			// Not tried yet (on a busy seed it may wait long in the library's queue): the
			// library's first attempt writes Processing, which wakes the guard.
			return reconcile.Result{}, nil
		case extstatus.Succeeded(be):
			return reconcile.Result{}, nil // the library read the secret to succeed
		}
	}
	if wait := settling(be, g.now()); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	exists, err := secrets.Exists(ctx, g.reader, be.Spec.SecretRef)
	if err != nil || exists {
		return reconcile.Result{}, err
	}
	if be.DeletionTimestamp == nil {
		return reconcile.Result{}, extstatus.ReportError(ctx, log, g.client, g.recorder, be, ReasonSecretMissing, &secrets.MissingError{Ref: be.Spec.SecretRef})
	}
	if !controllerutil.ContainsFinalizer(be, entryinfo.FinalizerName) || controllerutil.ContainsFinalizer(be, backupentry.FinalizerName) {
		return reconcile.Result{}, nil // nothing of ours holds it, or the library still handles it
	}
	prefix, err := g.deleteWithBucketCredentials(ctx, log, be)
	if err != nil {
		// A pass that ran out of time resumes at once, as in the entry's own deletion: no report.
		if !errors.As(err, new(*lasterror.InProgressError)) && !errors.As(err, new(*CopyPassWaitError)) {
			reason := ReasonDeletionWithBucketSecret
			switch {
			case errors.As(err, new(*OrphanError)):
				reason = ReasonObjectsKept
			case errors.As(err, new(*LiveEntryError)):
				reason = ReasonLiveBackupsKept
			case errors.As(err, new(*entryinfo.LocationError)), errors.As(err, new(*entryinfo.GardenKeptError)):
				reason = ReasonBackupsKept
			}
			if rerr := extstatus.ReportError(ctx, log, g.client, g.recorder, be, reason, err); rerr != nil {
				log.Error(rerr, "Reporting the failed deletion failed")
			}
		}
		return reconcilerutils.ReconcileErr(forDeletion(err, g.deleter.now()))
	}
	g.recorder.Eventf(be, nil, corev1.EventTypeWarning, ReasonPrefixDeletedWithBucketSecret, "Delete",
		"Credentials secret %s/%s was gone: the objects under %q in bucket %q were deleted with the BackupBucket's credentials",
		be.Spec.SecretRef.Namespace, be.Spec.SecretRef.Name, prefix.String(), be.Spec.BucketName)
	return reconcile.Result{}, controllerutils.RemoveFinalizers(ctx, g.client, be, entryinfo.FinalizerName)
}

// settleTime is how long the guard leaves an entry that the library is working on (created, or
// its last operation Processing, that recently) before it reads the entry's secret.
const settleTime = 10 * time.Second

// settling is how much longer the guard waits before it looks at be (0: look now). A new entry's
// reconcile writes it four times within a second, and each write would have the guard read the
// secret from the API server, about three reads per entry that nearly always find it: on a
// seed creating thousands of entries at once, the largest share of the extension's requests.
// The library's own retries of a missing secret write Processing again, each later than the one
// before, so an entry stuck on one is looked at within seconds of its retries spreading out.
func settling(be *extensionsv1alpha1.BackupEntry, now time.Time) time.Duration {
	since := be.CreationTimestamp.Time
	if last := be.Status.LastOperation; last != nil {
		if last.State != gardencorev1beta1.LastOperationStateProcessing {
			return 0
		}
		since = last.LastUpdateTime.Time
	}
	return max(since.Add(settleTime).Sub(now), 0)
}

// deleteWithBucketCredentials deletes the entry's prefix (Locate) with the credentials of its
// BackupBucket, the operator's for the same bucket, and returns the prefix.
func (g *orphanGuard) deleteWithBucketCredentials(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) (objectstore.Prefix, error) {
	loc, err := g.deleter.locateForDeletion(ctx, be)
	if err != nil {
		return loc.Prefix, err
	}
	prefix := loc.Prefix
	orphan := &OrphanError{Entry: be.Name, Bucket: be.Spec.BucketName, Prefix: prefix.String(), Secret: be.Spec.SecretRef}
	bb := &extensionsv1alpha1.BackupBucket{}
	if err := g.client.Get(ctx, client.ObjectKey{Name: be.Spec.BucketName}, bb); err != nil {
		if !apierrors.IsNotFound(err) {
			return prefix, err
		}
		orphan.Why = fmt.Sprintf("BackupBucket %q, whose credentials could stand in, is gone too", be.Spec.BucketName)
		if _, source := liveEntryOf(be.Name); source {
			// By design: a migration's source entry names the source seed's bucket.
			orphan.Why = fmt.Sprintf("BackupBucket %q, whose credentials could stand in, is not on this seed: a control-plane migration's source entry names the source seed's bucket, whose BackupBucket lives on the source seed", be.Spec.BucketName)
		}
		return prefix, orphan
	}
	exists, err := secrets.Exists(ctx, g.reader, bb.Spec.SecretRef)
	if err != nil {
		return prefix, err
	}
	if !exists {
		orphan.Why = fmt.Sprintf("the BackupBucket's credentials secret %s/%s is gone too", bb.Spec.SecretRef.Namespace, bb.Spec.SecretRef.Name)
		return prefix, orphan
	}
	if err := g.deleter.guardLiveEntry(ctx, be, prefix, bb.Spec.SecretRef); err != nil {
		return prefix, err
	}
	log.Info("Deleting the prefix of an entry whose credentials are gone with its bucket's", "bucketSecret", bb.Spec.SecretRef.Namespace+"/"+bb.Spec.SecretRef.Name)
	return prefix, g.deleter.deleteBoth(ctx, log, be, prefix, bb.Spec.SecretRef)
}
