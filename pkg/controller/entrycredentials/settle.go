// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"
	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/extstatus"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/lasterror"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/metrics"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// ConditionEntryCredentials on a BackupEntry says what the credential in its etcd-backup secret
// is and reaches: True/OwnPrefix (its own credential, reaching only its prefix), False/BucketWide
// (the bucket's credential, and why), False/NotIssued (its own could not be issued; the secret
// is unchanged), False/BucketWideAtQuota (its own could not be issued at the store's quota, and
// allowBucketCredentialAtQuota published the bucket's until there is room again).
const ConditionEntryCredentials = entryinfo.ConditionEntryCredentials

// Reasons of ConditionEntryCredentials and the entry credential events.
const (
	ReasonOwnPrefix              = "OwnPrefix"
	ReasonBucketWide             = "BucketWide"
	ReasonNotIssued              = "NotIssued"
	ReasonEntryCredentialIssued  = "EntryCredentialPublished"
	ReasonEntryCredentialRevoked = "EntryCredentialRevoked"
	ReasonEntryCredentialRetired = "EntryCredentialRetiring"
)

// Reasons of the opt-in fallback at the store's quota (allowBucketCredentialAtQuota): the
// condition's and the event's.
const (
	ReasonBucketWideAtQuota       = entryinfo.ReasonBucketWideAtQuota
	ReasonEntryCredentialFallback = "EntryCredentialFallback"
)

// settleEntryCredential finishes a reconcile or restore pass whose Data decided the entry's
// credential (o): once the etcd-backup secret is written (passErr nil), it records the entry's
// own credential on it, revokes what the secret no longer holds, and reports the condition and
// the isolation metric. It returns passErr, or the first error of its own.
func (c *Credentials) settleEntryCredential(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, o *Outcome, passErr error) error {
	if !o.decided { // the generic actuator returned before it asked for the data
		return passErr
	}
	err := passErr
	if err == nil {
		err = lasterror.For(c.recordAndRevoke(ctx, log, be, o))
	}
	status, reason, message := gardencorev1beta1.ConditionFalse, ReasonBucketWide, o.reach
	switch {
	case o.err != nil:
		reason, message = ReasonNotIssued, o.err.Error()
	case o.published != nil:
		status, reason = gardencorev1beta1.ConditionTrue, ReasonOwnPrefix
		message = fmt.Sprintf("the etcd-backup secret holds credential %s of issuer %s (in %s): %s%s", o.published.ID, o.published.Issuer, o.published.IssuedIn, o.reach, o.schedule)
	case o.atQuota:
		reason = ReasonBucketWideAtQuota
	}
	if passErr == nil || o.err != nil {
		isolation := metrics.IsolationBucketWide
		switch {
		case o.published != nil && o.err == nil:
			isolation = metrics.IsolationOwnPrefix
		case o.atQuota:
			isolation = metrics.IsolationBucketWideAtQuota
			if cond := v1beta1helper.GetCondition(be.Status.Conditions, ConditionEntryCredentials); cond == nil || cond.Reason != ReasonBucketWideAtQuota {
				c.recorder.Eventf(be, nil, corev1.EventTypeWarning, ReasonEntryCredentialFallback, "Reconcile", "%s", extstatus.EventNote(message))
			}
		}
		metrics.SetEntryIsolationTo(be.Name, isolation)
		if cerr := c.setEntryCondition(ctx, be, status, reason, message); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

// recordAndRevoke writes the record of the published credential onto the etcd-backup secret
// (with any credential still to revoke), then revokes what it no longer holds.
func (c *Credentials) recordAndRevoke(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, o *Outcome) error {
	var unrevoked []entryRecord
	var revokeErrs []error
	for _, r := range o.revoke {
		if err := c.revokeEntryCredentials(ctx, be, r, o.published); err != nil {
			// Every other one is still tried, and every failed one stays on record.
			unrevoked, revokeErrs = append(unrevoked, r), append(revokeErrs, err)
			continue
		}
		log.Info("Revoked entry credentials", "issuer", r.Issuer, "credential", r.ID, "access", r.Access)
		c.recorder.Eventf(be, nil, corev1.EventTypeNormal, ReasonEntryCredentialRevoked, "Reconcile",
			"Revoked the entry's credentials of issuer %s (%s) that its etcd-backup secret no longer holds", r.Issuer, orAll(r.ID))
	}
	record := entryrecord.Record{Entry: be.Name, Published: o.published, Unrevoked: unrevoked, Retiring: o.retire}
	if err := c.updateRecord(ctx, be, func(r *entryrecord.Record) { *r = record }); err != nil {
		return err
	}
	// The secret's record says it now (unrevoked and retiring ones too).
	if err := c.clearIntent(ctx, be); err != nil {
		return err
	}
	// After the record, which gardener's write of the secret just reset: the record is never
	// missing longer than that write and this patch take.
	next, endErr := c.endRetired(ctx, log, be, o)
	if !next.IsZero() {
		if err := c.updateRecord(ctx, be, func(r *entryrecord.Record) { r.NextEnd = next.UTC().Truncate(time.Second) }); err != nil {
			return errors.Join(endErr, err)
		}
	}
	if o.issued {
		c.recorder.Eventf(be, nil, corev1.EventTypeNormal, ReasonEntryCredentialIssued, "Reconcile",
			"The etcd-backup secret holds the entry's own credential %s of issuer %s", o.published.ID, o.published.Issuer)
	}
	return errors.Join(errors.Join(revokeErrs...), endErr, c.settleRotation(ctx, log, be, o))
}

// endRetired ends, with the issuer of the published credential, the entry's retired credentials
// whose time has come, and returns when the next one ends (the rotated-out one this pass retires
// included; zero: none), for the rotation scheduler to ask for a pass then.
func (c *Credentials) endRetired(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, o *Outcome) (time.Time, error) {
	if o.published == nil || o.issuer == nil {
		return time.Time{}, nil
	}
	next, err := o.issuer.EndRetiredEntryCredentials(objectstore.WithOperation(ctx, objectstore.OpRevokeCredentials), be.Spec.BucketName, o.prefix, o.published.Access)
	if err != nil {
		err = fmt.Errorf("ending the entry's retired credentials whose time has come: %w", err)
	}
	if r := o.retire; r != nil && r.Until.After(time.Now()) && (next.IsZero() || r.Until.Before(next)) {
		next = r.Until
	}
	if !next.IsZero() {
		log.V(1).Info("Entry credentials retiring", "nextEnd", next)
	}
	return next, err
}

func orAll(id string) string {
	if id == "" {
		return "all of them"
	}
	return id
}

// updateRecord changes the record on the entry's etcd-backup secret with change (which gets the
// entry's record there, or an empty one of the entry) and writes it in this build's form
// (entryrecord.Write, which removes an earlier build's); nothing is written when nothing changes.
// A secret whose record is not the entry's (another entry of its shoot namespace wrote it since
// this pass's write, finding 9 of issue 44) is not written: that would overwrite the other
// entry's record; the error retries the pass, which writes the secret anew.
func (c *Credentials) updateRecord(ctx context.Context, be *extensionsv1alpha1.BackupEntry, change func(*entryrecord.Record)) error {
	key := etcdBackupSecretKey(be)
	s := &corev1.Secret{}
	if err := c.client.Get(ctx, key, s); err != nil {
		return fmt.Errorf("reading the etcd-backup secret to record the entry's credential: %w", err)
	}
	r, ours, err := entryrecord.Read(be.Name, s.Annotations)
	if err != nil {
		return fmt.Errorf("not recording the entry's credential on etcd-backup secret %s: %w", key, err)
	}
	if !ours {
		return fmt.Errorf("not recording the entry's credential on etcd-backup secret %s: another BackupEntry of its namespace (%q) wrote it since, and its record is that entry's; retried", key, s.Annotations[genericactuator.AnnotationKeyCreatedByBackupEntry])
	}
	change(&r)
	base := s.DeepCopy()
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	entryrecord.Write(s.Annotations, r)
	if maps.Equal(s.Annotations, base.Annotations) {
		return nil
	}
	if err := c.client.Patch(ctx, s, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording the entry's credential on its etcd-backup secret (annotation %s): %w", entryrecord.AnnotationEntryCredentialRecord, err)
	}
	return nil
}

// revokeEntryCredentials revokes, with the issuer that issued them and only where they were
// issued, the entry's credentials r names (r.ID, or all of r's access when r.ID is empty),
// keeping published when it is the same issuer's.
func (c *Credentials) revokeEntryCredentials(ctx context.Context, be *extensionsv1alpha1.BackupEntry, r entryRecord, published *entryRecord) error {
	issuer, prefix, err := c.issuerWhereIssued(ctx, be, r)
	if err != nil {
		return err
	}
	var keep []string
	if published != nil && published.Issuer == r.Issuer && published.IssuedIn == r.IssuedIn && published.Access == r.Access {
		keep = []string{published.ID}
	}
	return issuer.RevokeEntryCredentials(objectstore.WithOperation(ctx, objectstore.OpRevokeCredentials), be.Spec.BucketName, prefix, r.Access, keep)
}

// issuerWhereIssued builds the issuer that issued r (its record) and the entry's prefix; an
// issuer that reaches another place than the one r was issued in is a CredentialElsewhereError.
func (c *Credentials) issuerWhereIssued(ctx context.Context, be *extensionsv1alpha1.BackupEntry, r entryRecord) (objectstore.EntryCredentialIssuer, objectstore.Prefix, error) {
	_, cfg, err := c.EntrySettings(be)
	if err != nil {
		return nil, objectstore.Prefix{}, err
	}
	issuer, err := c.entryIssuer(ctx, be, cfg, r.Issuer)
	if err != nil {
		return nil, objectstore.Prefix{}, fmt.Errorf("building issuer %s for the entry's credentials: %w", r.Issuer, err)
	}
	if issuer == nil {
		return nil, objectstore.Prefix{}, objectstore.Invalidf("the entry's credentials of issuer %s cannot be revoked or retired: the operator's credentials build no such issuer now; revoke them by hand", r.Issuer)
	}
	if r.IssuedIn != "" {
		current, err := issuer.Location(objectstore.WithOperation(ctx, objectstore.OpCredentialLocation))
		if err != nil {
			return nil, objectstore.Prefix{}, fmt.Errorf("finding where the entry's credentials live: %w", err)
		}
		if current != r.IssuedIn {
			return nil, objectstore.Prefix{}, &objectstore.CredentialElsewhereError{IDs: orAll(r.ID), Recorded: r.IssuedIn, Current: current}
		}
	}
	prefix, err := objectstore.EntryPrefix(be.Name)
	return issuer, prefix, err
}

// setEntryCondition writes ConditionEntryCredentials.
func (c *Credentials) setEntryCondition(ctx context.Context, be *extensionsv1alpha1.BackupEntry, status gardencorev1beta1.ConditionStatus, reason, message string) error {
	reader := c.reader
	if reader == nil {
		reader = c.client
	}
	return extstatus.Patch(ctx, c.client, reader, be, func(be *extensionsv1alpha1.BackupEntry) bool {
		// Thousands of entries reconcile on every change of their secret: an unchanged condition
		// is not written again.
		if c := v1beta1helper.GetCondition(be.Status.Conditions, ConditionEntryCredentials); c != nil && c.Status == status && c.Reason == reason && c.Message == message {
			return false
		}
		be.Status.Conditions, _ = extstatus.SetCondition(be.Status.Conditions, ConditionEntryCredentials, status, reason, message, time.Now())
		return true
	})
}

// retireMigratedEntryCredential lets the entry's own credential, which it leaves behind on this
// seed, stay valid for the migration grace period (the source's last snapshots), then end.
func (c *Credentials) retireMigratedEntryCredential(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	current, err := c.ReadEtcdBackupSecret(ctx, be)
	if err != nil || current == nil {
		return err
	}
	record, ours, err := entryrecord.Read(be.Name, current.Annotations)
	if err != nil {
		return fmt.Errorf("retiring the credential the entry leaves behind: %w", err)
	}
	r, fromIntent := MigrationRetiree(record, ours, intentOf(be))
	if r == nil {
		return nil
	}
	settings, cfg, err := c.EntrySettings(be)
	var pending *provider.SeedConfigPendingError
	if errors.As(err, &pending) {
		return err // retried: the configuration comes, and with it the migration grace
	}
	// An entry's providerConfig that does not decode: the configuration in force builds the
	// issuer (connect.EntryConfig's fallback), and the migration grace is its default; the
	// migration does not wait for the bucket's configuration problem, which its reconcile reports.
	issuer, err := c.entryIssuer(ctx, be, cfg, r.Issuer)
	if err != nil && !errors.Is(err, objectstore.ErrInvalidConfig) {
		return fmt.Errorf("building issuer %s to retire the entry's credential %s: %w", r.Issuer, r.ID, err) // retried
	}
	if err != nil || issuer == nil {
		// The migration does not wait for what cannot be done from here: the entry's first
		// issuance on its new seed revokes every credential of it that is not retiring.
		why := "the operator's credentials build no such issuer now"
		if err != nil {
			why = err.Error()
		}
		c.recorder.Eventf(be, nil, corev1.EventTypeWarning, ReasonEntryCredentialRetired, "Migrate",
			"The entry's credential %s of issuer %s cannot be retired from here (%s): the entry's first issuance on its new seed revokes it", r.ID, r.Issuer, why)
		return nil
	}
	if fromIntent && issuer.CredentialID(current.Data) != r.ID {
		return nil // the write the intent announced did not happen: the secret holds no credential of its
	}
	prefix, err := objectstore.EntryPrefix(be.Name)
	if err != nil {
		return err
	}
	until := time.Now().Add(settings.MigrationGrace())
	if err := issuer.RetireEntryCredentials(ctx, be.Spec.BucketName, prefix, r.Access, []string{r.ID}, until); err != nil {
		return fmt.Errorf("retiring the entry's credential %s: %w", r.ID, err)
	}
	c.recorder.Eventf(be, nil, corev1.EventTypeNormal, ReasonEntryCredentialRetired, "Migrate",
		"The entry's credential %s of issuer %s stays valid until %s (migrationGracePeriod), then ends", r.ID, r.Issuer, until.UTC().Format(time.RFC3339))
	return nil
}

// keepEntryRecordForDeletion copies the etcd-backup secret's record onto the entry before the
// generic actuator deletes the secret, with the credentials of the entry's intent: a restart
// after gardener's write of the secret leaves them on no record of the secret, and the issuer
// configured now need not be the one that issued them.
func (c *Credentials) keepEntryRecordForDeletion(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	kept := entryrecord.ReadKept(be.Annotations)
	if len(kept.ForDeletion) > 0 {
		return nil
	}
	current, err := c.ReadEtcdBackupSecret(ctx, be)
	if err != nil {
		return err
	}
	var record entryrecord.Record
	if current != nil {
		if record, _, err = entryrecord.Read(be.Name, current.Annotations); err != nil {
			return fmt.Errorf("keeping the record of the entry's credentials for its deletion: %w", err)
		}
	}
	if kept.ForDeletion = append(record.Credentials(), kept.Intent.Credentials()...); len(kept.ForDeletion) == 0 {
		return nil
	}
	base := be.DeepCopy()
	if be.Annotations == nil {
		be.Annotations = map[string]string{}
	}
	entryrecord.WriteKept(be.Annotations, kept)
	if err := c.client.Patch(ctx, be, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("keeping the record of the entry's credentials for its deletion (annotation %s): %w", entryrecord.AnnotationEntryCredentialKept, err)
	}
	return nil
}

// revokeDeletedEntryCredentials revokes every credential of a deleted entry, once its objects
// are gone: with the recorded issuers, and with the configured one.
func (c *Credentials) revokeDeletedEntryCredentials(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	if entryinfo.IsGardenEntry(be) {
		return nil
	}
	settings, _, err := c.EntrySettings(be)
	if err != nil {
		// Not knowing the configured issuer is not knowing whether it holds a credential of the
		// entry: the deletion waits for the settings rather than release the entry with one left.
		return fmt.Errorf("the deleted entry's credentials of the configured issuer: %w", err)
	}
	for _, r := range DeletionRevocations(entryrecord.ReadKept(be.Annotations).ForDeletion, settings, accessOf(be)) {
		if err := c.revokeEntryCredentials(ctx, be, r, nil); err != nil {
			return fmt.Errorf("revoking the deleted entry's credentials of issuer %s: %w", r.Issuer, err)
		}
		log.Info("Revoked the deleted entry's credentials", "issuer", r.Issuer, "access", r.Access)
	}
	return nil
}
