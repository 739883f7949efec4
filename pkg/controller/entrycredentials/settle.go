// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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
// credential (o), after gardener's write of the etcd-backup secret (passErr nil) or its failure:
// it observes, decides (DecideSettle) and carries out the plan (settle), then sets the condition
// and the isolation metric the plan says. It returns passErr, or the first error of its own.
func (c *Credentials) settleEntryCredential(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, o *Outcome, passErr error) error {
	obs := SettleObserved{Entry: be.Name, Decided: o.decided, Written: passErr == nil, Published: o.published, Issued: o.issued,
		Revoke: o.revoke, Retire: o.retire, Rotation: o.rotation, AtQuota: o.atQuota, Reach: o.reach, Schedule: o.schedule, Now: time.Now()}
	if o.err != nil {
		obs.NotIssued = o.err.Error()
	}
	if cond := v1beta1helper.GetCondition(be.Status.Conditions, ConditionEntryCredentials); cond != nil {
		obs.PriorReason = cond.Reason
	}
	plan := DecideSettle(obs)
	err := passErr
	if err == nil {
		err = lasterror.For(c.settle(ctx, log, be, o, plan.Steps))
	}
	if cond := plan.Condition; cond != nil {
		if cond.FallbackEvent {
			c.recorder.Eventf(be, nil, corev1.EventTypeWarning, ReasonEntryCredentialFallback, "Reconcile", "%s", extstatus.EventNote(cond.Message))
		}
		metrics.SetEntryIsolationTo(be.Name, cond.Isolation)
		if cerr := c.setEntryCondition(ctx, be, cond.Status, cond.Reason, cond.Message); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

// settle carries out steps in order, each step's event once it succeeded, and stops at the first
// failure of a step that is not Continue; it returns every failure.
func (c *Credentials) settle(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, o *Outcome, steps []SettleStep) error {
	var errs []error
	for _, s := range steps {
		if err := c.settleStep(ctx, log, be, o, s); err != nil {
			errs = append(errs, err)
			if s.Continue {
				continue
			}
			break
		}
		if e := s.Event; e != nil {
			c.recorder.Eventf(be, nil, e.Type, e.Reason, "Reconcile", "%s", e.Message)
		}
	}
	return errors.Join(errs...)
}

// settleStep carries out s (SettleKind says what each kind does).
func (c *Credentials) settleStep(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry, o *Outcome, s SettleStep) error {
	switch s.Kind {
	case SettleRecord:
		if err := c.updateRecord(ctx, be, func(r *entryrecord.Record) { *r = s.Record }); err != nil {
			return err
		}
		return c.clearIntent(ctx, be) // the secret's record says it now
	case SettleRevoke:
		if err := c.revokeEntryCredentials(ctx, be, s.Credential, s.Keep); err != nil {
			return err // it stays on record, and the next pass revokes it
		}
		log.Info("Revoked entry credentials", "issuer", s.Credential.Issuer, "credential", s.Credential.ID, "access", s.Credential.Access)
		return c.updateRecord(ctx, be, func(r *entryrecord.Record) {
			r.Unrevoked = slices.DeleteFunc(r.Unrevoked, func(u entryrecord.Credential) bool { return u.ID == s.Credential.ID && u.SamePlace(s.Credential) })
		})
	case SettleEndRetired:
		if o.issuer == nil {
			return fmt.Errorf("ending the entry's retired credentials: the pass kept no issuer of its published credential")
		}
		answer, err := o.issuer.EndRetiredEntryCredentials(objectstore.WithOperation(ctx, objectstore.OpRevokeCredentials), be.Spec.BucketName, o.prefix, o.published.Access)
		if err != nil {
			err = fmt.Errorf("ending the entry's retired credentials whose time has come: %w", err)
		}
		next := NextEnd(answer, s.Until)
		log.V(1).Info("Entry credentials retiring", "nextEnd", next)
		// For the rotation scheduler to ask for a pass then.
		return errors.Join(err, c.updateRecord(ctx, be, func(r *entryrecord.Record) { r.NextEnd = next.UTC().Truncate(time.Second) }))
	case SettleEvent:
		return nil
	case SettleRemoveRequest:
		return c.removeRotationRequest(ctx, be, s.Request)
	case SettleRetire:
		if err := c.retireEntryCredential(ctx, be, s); err != nil {
			return fmt.Errorf("retiring the entry's rotated-out credential %s (kept on record, retried): %w", s.Credential.ID, err)
		}
		if err := c.updateRecord(ctx, be, func(r *entryrecord.Record) { r.Retiring = nil }); err != nil {
			return err
		}
		log.Info("Retired the entry's rotated-out credential", "previous", s.Credential.ID, "until", s.Until)
		return nil
	}
	return fmt.Errorf("settling the entry's credential: unknown step %d", s.Kind)
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
