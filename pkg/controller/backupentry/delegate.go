// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package backupentry is the provider-neutral BackupEntry controller: gardener's generic actuator
// writes the shoot's etcd-backup secret; this delegate supplies its data and deletes the entry's
// prefix with the deletion engine.
package backupentry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entrycredentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/options"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// Event reasons emitted on BackupEntries.
const (
	ReasonLockedObjectsDeferred = "LockedObjectsDeferred"
	ReasonPrefixDeleted         = "PrefixDeleted"
	// ReasonBackupsKept: the deletion deleted nothing, because where the snapshots live cannot
	// be told, or a garden's entry's Garden still lives (LocationError, GardenKeptError).
	ReasonBackupsKept = "BackupsKept"
)

var errEmptyBucketName = objectstore.Invalidf("spec.bucketName: Required value: the BackupBucket's name")

type delegate struct {
	provider provider.Provider
	reader   client.Reader
	recorder events.EventRecorder
	deletion options.DeletionOptions
	// creds decides and carries out the entry's own credential (entryCredentials).
	creds *entrycredentials.Credentials
	// clock times the wait for the entry copy before a deletion in the copy (nil: the real clock).
	clock clock.PassiveClock
}

// now is the delegate's clock's time.
func (d *delegate) now() time.Time {
	if d.clock == nil {
		return time.Now()
	}
	return d.clock.Now()
}

// newDelegate returns the delegate for p; writer writes the entry's credential record and
// condition (nil where nothing is written).
func newDelegate(p provider.Provider, reader client.Reader, writer client.Client, recorder events.EventRecorder, deletion options.DeletionOptions) *delegate {
	return &delegate{provider: p, reader: reader, recorder: recorder, deletion: deletion, creds: entrycredentials.New(p, reader, writer, recorder)}
}

var _ genericactuator.BackupEntryDelegate = (*delegate)(nil)

// NewDelegate returns the delegate for p. reader must read secrets from the API server.
func NewDelegate(p provider.Provider, reader client.Reader, recorder events.EventRecorder, deletion options.DeletionOptions) genericactuator.BackupEntryDelegate {
	return newDelegate(p, reader, nil, recorder, deletion)
}

// GetETCDSecretData returns exactly the keys etcd-backup-restore reads, after checking with one
// read of the bucket that these credentials reach it: an entry is not Succeeded while its
// sidecar could not find its bucket.
func (d *delegate) GetETCDSecretData(ctx context.Context, _ logr.Logger, be *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	return d.etcdSecretData(ctx, be, data, &entrycredentials.Outcome{}, &etcdDecided{})
}

// entryPass is the delegate of one reconcile or restore pass: gardener's generic actuator,
// built for the pass (holdingActuator.pass), asks it for the etcd-backup secret's data, and it
// fills the pass's outcome, which the holding actuator settles once the secret is written.
type entryPass struct {
	*delegate

	outcome *entrycredentials.Outcome
	// etcd is the Etcd container the pass decided etcd-backup for, recorded once it succeeded.
	etcd *etcdDecided
}

// GetETCDSecretData implements genericactuator.BackupEntryDelegate for the pass.
func (p *entryPass) GetETCDSecretData(ctx context.Context, _ logr.Logger, be *extensionsv1alpha1.BackupEntry, data map[string][]byte) (map[string][]byte, error) {
	return p.etcdSecretData(ctx, be, data, p.outcome, p.etcd)
}

// etcdSecretData is GetETCDSecretData, deciding the entry's credential into o and noting into
// etcd the Etcd container the decision was made for.
func (d *delegate) etcdSecretData(ctx context.Context, be *extensionsv1alpha1.BackupEntry, data map[string][]byte, o *entrycredentials.Outcome, etcd *etcdDecided) (map[string][]byte, error) {
	if be.Spec.BucketName == "" {
		// etcd-backup-restore would get no container: refused before the shoot gets the secret.
		return nil, lasterror.For(errEmptyBucketName)
	}
	return d.etcdBackupData(ctx, be, data, o, etcd)
}

// checkBucket reads the bucket once with the entry's credentials (the store's Probe: one
// request, the cheapest read that every credential the extension hands out may make). Thousands
// of entries share one bucket, and gardenlet reconciles each on every change of its secret: one
// request per entry is what that costs.
func (d *delegate) checkBucket(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	// An entry whose name makes no prefix could never be deleted: refused before it is used.
	if err := checkName(be); err != nil {
		return err
	}
	data, err := connect.NewDataPlane(ctx, d.reader, d.provider, be.Spec.SecretRef, be.Spec.Region)
	if err != nil {
		return err
	}
	err = data.Probe(objectstore.WithOperation(ctx, objectstore.OpProbe), be.Spec.BucketName)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, objectstore.ErrBucketNotFound):
		return objectstore.Invalidf("spec.bucketName: bucket %q does not exist (in region %q, with these credentials): %w", be.Spec.BucketName, be.Spec.Region, err)
	}
	return fmt.Errorf("checking that the entry's credentials reach bucket %q: %w", be.Spec.BucketName, err)
}

// checkName refuses an entry whose name gives no place for its snapshots: a shoot's entry whose
// name makes no prefix, a garden's entry not named as gardener-operator names it. The garden's
// bucket and path are not checked here: a failed reconcile would keep the garden's etcd from
// being deployed, and the inventory reports where its snapshots are not found.
func checkName(be *extensionsv1alpha1.BackupEntry) error {
	if entryinfo.IsGardenEntry(be) {
		_, err := entryinfo.GardenUID(be)
		return err
	}
	_, err := objectstore.EntryPrefix(be.Name)
	return err
}

// Delete deletes every object version where the entry's snapshots live (Locate: a shoot's
// `<entry name without "source-">/`, a garden's `[<path>/]virtual-garden-etcd-main/`) and
// nothing else; a garden's entry whose Garden lives deletes nothing and is kept.
func (d *delegate) Delete(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	return forDeletion(d.delete(ctx, log, be), d.now())
}

func (d *delegate) delete(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	loc, err := d.locateForDeletion(ctx, be)
	if err != nil {
		return err
	}
	if err := d.refuseIfLive(ctx, be, loc.Prefix, be.Spec.SecretRef); err != nil {
		return err
	}
	return d.deleteBoth(ctx, log, be, loc.Prefix, be.Spec.SecretRef)
}

// deleteBoth deletes prefix in the entry's bucket with the credentials in secretRef, then in its
// copy bucket (deleteCopyPrefix); only when both are done does it say so (the PrefixDeleted
// event, the deletion's metrics), once.
func (d *delegate) deleteBoth(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, prefix objectstore.Prefix, secretRef corev1.SecretReference) error {
	res, err := d.deletePrefix(ctx, log, be, prefix, secretRef)
	if err != nil {
		return err
	}
	// The primary first: while it holds the entry's snapshots, the copy is their second copy.
	if err := d.deleteCopyPrefix(ctx, log, be, prefix); err != nil {
		return err
	}
	d.recorder.Eventf(be, nil, corev1.EventTypeNormal, ReasonPrefixDeleted, "Delete",
		"Deleted the objects under %q in bucket %q (%d in the last pass)", prefix.String(), be.Spec.BucketName, res.Deleted)
	metrics.DeletionDone(metrics.KindBackupEntry, be.Name)
	metrics.ForgetEntry(be.Name)
	return nil
}

// locateForDeletion is LocateEntry for a deletion: a place that cannot be told, or one the entry
// must keep (Location.Keep), is an error that deletes nothing, with a warning event.
func (d *delegate) locateForDeletion(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (entryinfo.Location, error) {
	loc, err := entryinfo.LocateEntry(ctx, d.reader, be)
	if err == nil && loc.Keep != nil {
		err = loc.Keep
	}
	if errors.Is(err, objectstore.ErrInvalidConfig) {
		d.recorder.Eventf(be, nil, corev1.EventTypeWarning, ReasonBackupsKept, "Delete", "%v", err)
	}
	return loc, err
}

// deletePrefix deletes prefix, the entry's (Locate), with the credentials in secretRef (the
// entry's own, or its bucket's when the entry's are gone: see orphanGuard), and returns its last
// pass; deleteBoth says when the entry's deletion is done.
func (d *delegate) deletePrefix(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, prefix objectstore.Prefix, secretRef corev1.SecretReference) (objectstore.DeleteResult, error) {
	if be.Spec.BucketName == "" {
		return objectstore.DeleteResult{}, errEmptyBucketName
	}
	data, err := connect.NewDataPlane(ctx, d.reader, d.provider, secretRef, be.Spec.Region)
	if err != nil {
		return objectstore.DeleteResult{}, err
	}
	opts := d.deletion.DeleteOptions(ctx)
	// The entries deleted at once against one bucket share its budget: together they keep as
	// many requests in flight as one entry's parallelism, however many reconciles run.
	opts.Budget = objectstore.SharedBudget(BudgetKey(d.provider.Type(), be.Spec.Region, be.Spec.BucketName), opts.Parallelism)
	res, err := objectstore.DeletePrefix(ctx, data, be.Spec.BucketName, prefix, opts)
	log.Info("Deleting backup entry prefix", "bucket", be.Spec.BucketName, "prefix", prefix.String(),
		"deleted", res.Deleted, "locked", res.Locked, "throttled", res.Throttled, "done", res.Done)
	metrics.RecordDeletionPass(metrics.KindBackupEntry, be, res)
	if err != nil {
		return res, fmt.Errorf("deleting prefix %q in bucket %q: %w", prefix.String(), be.Spec.BucketName, err)
	}
	if !res.Done {
		return res, &lasterror.InProgressError{Bucket: be.Spec.BucketName, Prefix: prefix.String(), Deleted: res.Deleted}
	}
	if res.Locked > 0 {
		deferral, err := d.deferDeletion(ctx, log, be, prefix.String(), secretRef)
		if err != nil {
			if errors.Is(err, objectstore.ErrUnsupported) {
				return res, &lasterror.LockedObjectsError{Bucket: be.Spec.BucketName, Prefix: prefix.String(), Count: res.Locked, RetainUntil: res.EarliestRetainUntil, NotDeferred: err}
			}
			return res, fmt.Errorf("deferring the deletion of %d locked objects under %q: %w", res.Locked, prefix.String(), err)
		}
		// The store read its rule back before answering: only now may the finalizer go.
		metrics.CountDeferred(metrics.KindBackupEntry, res.Locked)
		d.recorder.Eventf(be, nil, corev1.EventTypeWarning, ReasonLockedObjectsDeferred, "Delete",
			"%d object versions under %q in bucket %q are held by retention locks %s; their deletion is deferred to the store's %s (%s), which deletes them when the locks expire",
			res.Locked, prefix.String(), be.Spec.BucketName, lockSpan(res), deferral.Rule, deferral.Verification())
		log.Info("Locked objects are deferred to the store", "count", res.Locked, "earliestRetainUntil", res.EarliestRetainUntil,
			"latestRetainUntil", res.LatestRetainUntil, "rule", deferral.Rule, "verification", deferral.Verification())
	}
	return res, nil
}

// deferDeletion hands the locked objects under prefix to the store, with the entry's own
// credentials first (the management plane built with the entry's copy of its bucket's
// providerConfig; an invalid one: the defaults, as for a bucket's deletion): every store's deferral needs no more than what the entry's credentials may
// do where the store allows it (S3: tagging the versions and reading the bucket's rule, which
// the BackupBucket's reconcile puts in place). Where they cannot (an Azure account key cannot
// read the lifecycle rule back; a rule that is not in place yet), the BackupBucket's, the
// operator's for the same bucket, are asked when the BackupBucket is on this seed. A source-
// entry of a migration lives on the destination seed and its bucket's BackupBucket on the source
// seed: then the entry's answer is returned with what is missing and what the operator can do,
// and nothing is claimed.
func (d *delegate) deferDeletion(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, prefix string, used corev1.SecretReference) (objectstore.Deferral, error) {
	ctx = objectstore.WithOperation(ctx, objectstore.OpDeferDeletion)
	entryCfg, _ := connect.EntryConfig(d.provider, be)
	mgmt, err := connect.NewManagement(ctx, d.reader, used, be.Spec.Region, entryCfg)
	if err != nil {
		return objectstore.Deferral{}, err
	}
	deferral, err := mgmt.DeferDeletion(ctx, be.Spec.BucketName, prefix)
	if err == nil || !errors.Is(err, objectstore.ErrUnsupported) && !errors.Is(err, objectstore.ErrForbidden) {
		return deferral, err
	}
	bb := &extensionsv1alpha1.BackupBucket{}
	if gerr := d.reader.Get(ctx, client.ObjectKey{Name: be.Spec.BucketName}, bb); gerr != nil {
		if apierrors.IsNotFound(gerr) {
			return deferral, fmt.Errorf("the entry's credentials cannot complete the deferral, and the BackupBucket %q is not on this seed (a source- entry of a migration lives on the destination seed, its bucket's BackupBucket on the source seed), so its credentials cannot be asked; reconcile the BackupBucket on its seed so that the store's deferral rule is in place, or wait until the retention locks expire (the deletion is retried): %w", be.Spec.BucketName, err)
		}
		return deferral, fmt.Errorf("the entry's credentials cannot complete the deferral (%w), and reading the BackupBucket %q for its credentials failed: %v", err, be.Spec.BucketName, gerr)
	}
	if bb.Spec.SecretRef == used {
		return deferral, err
	}
	cfg, _ := connect.BucketConfig(d.provider, bb) // invalid: the defaults, as for a bucket's deletion
	bucketMgmt, serr := connect.NewManagement(ctx, d.reader, bb.Spec.SecretRef, be.Spec.Region, cfg)
	if serr != nil {
		return deferral, err
	}
	log.Info("Deferring with the BackupBucket's credentials", "reason", err.Error())
	bucketDeferral, berr := bucketMgmt.DeferDeletion(ctx, be.Spec.BucketName, prefix)
	if berr == nil || !errors.Is(berr, objectstore.ErrUnsupported) {
		return bucketDeferral, berr
	}
	return deferral, err // neither can: the entry's own reason stands
}

// lockSpan says until when the locks of a pass's locked objects last.
func lockSpan(res objectstore.DeleteResult) string {
	switch {
	case res.LatestRetainUntil.IsZero():
		return "of unknown end (legal holds, or retention the store does not disclose)"
	case res.EarliestRetainUntil.Equal(res.LatestRetainUntil):
		return "until " + res.LatestRetainUntil.UTC().Format(time.RFC3339)
	}
	return "until " + res.EarliestRetainUntil.UTC().Format(time.RFC3339) + " (the first) to " + res.LatestRetainUntil.UTC().Format(time.RFC3339) + " (the last)"
}

// BudgetKey names the process-wide deletion budget of a bucket (objectstore.SharedBudget).
func BudgetKey(providerType, region, bucket string) string {
	return providerType + "/" + region + "/" + bucket
}
