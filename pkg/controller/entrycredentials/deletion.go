// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"
	"fmt"
	"maps"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// KeptForDeletion is what a deleted entry keeps on itself before the generic actuator deletes
// its etcd-backup secret (kept: what it keeps already; record: the secret's record of it): what
// it kept already (a restart: the secret may be gone), else every credential the record and the
// entry's intent name (a restart after gardener's write leaves the intent's on no record, and
// the issuer configured now need not be the one that issued them).
func KeptForDeletion(kept entryrecord.Kept, record entryrecord.Record) []entryrecord.Credential {
	if len(kept.ForDeletion) > 0 {
		return kept.ForDeletion
	}
	return append(record.Credentials(), kept.Intent.Credentials()...)
}

// keepEntryRecordForDeletion keeps KeptForDeletion on the entry (nothing is written when it
// keeps that already).
func (c *Credentials) keepEntryRecordForDeletion(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
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
	kept := entryrecord.ReadKept(be.Annotations)
	kept.ForDeletion = KeptForDeletion(kept, record)
	base := be.DeepCopy()
	annotations := maps.Clone(be.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	if !entryrecord.WriteKept(annotations, kept) {
		return nil
	}
	be.Annotations = annotations
	if err := c.client.Patch(ctx, be, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("keeping the record of the entry's credentials for its deletion (annotation %s): %w", entryrecord.AnnotationEntryCredentialKept, err)
	}
	return nil
}

// DeletionObserved is what a deleted entry's revocation reads once its objects are gone.
type DeletionObserved struct {
	// Garden: a garden's entry (entryinfo.IsGardenEntry), which keeps its bucket's credential
	// and never gets one of its own (BucketWideBecause).
	Garden bool
	// Kept is what the entry kept for its deletion (KeptForDeletion).
	Kept []entryrecord.Credential
	// Settings are the entry's credential settings (nil: off); SettingsErr is why they could
	// not be read.
	Settings    *credentials.EntrySettings
	SettingsErr error
	// Access is the entry's access (read-only for a source- entry).
	Access objectstore.EntryAccess
}

// DeletionPlan is what a deleted entry revokes (Revoke, in order), or why its deletion waits
// (Err, retried).
type DeletionPlan struct {
	Revoke []entryrecord.Credential
	Err    error
}

// DecideDeletion decides a deleted entry's revocations: a garden's entry revokes nothing (it
// has no credential of its own, whatever the settings say); unreadable settings make the
// deletion wait, for not knowing the configured issuer is not knowing whether it holds a
// credential of the entry (the entry is not released with one left); else DeletionRevocations.
func DecideDeletion(o DeletionObserved) DeletionPlan {
	switch {
	case o.Garden:
		return DeletionPlan{}
	case o.SettingsErr != nil:
		return DeletionPlan{Err: fmt.Errorf("the deleted entry's credentials of the configured issuer: %w", o.SettingsErr)}
	}
	return DeletionPlan{Revoke: DeletionRevocations(o.Kept, o.Settings, o.Access)}
}

// revokeDeletedEntryCredentials revokes every credential of a deleted entry, once its objects
// are gone, as DecideDeletion says: with the recorded issuers, and with the configured one.
func (c *Credentials) revokeDeletedEntryCredentials(ctx context.Context, log logr.Logger, be *extensionsv1alpha1.BackupEntry) error {
	settings, _, err := c.EntrySettings(be)
	plan := DecideDeletion(DeletionObserved{Garden: entryinfo.IsGardenEntry(be), Kept: entryrecord.ReadKept(be.Annotations).ForDeletion,
		Settings: settings, SettingsErr: err, Access: accessOf(be)})
	if plan.Err != nil {
		return plan.Err
	}
	for _, r := range plan.Revoke {
		if err := c.revokeEntryCredentials(ctx, be, r, nil); err != nil {
			return fmt.Errorf("revoking the deleted entry's credentials of issuer %s: %w", r.Issuer, err)
		}
		log.Info("Revoked the deleted entry's credentials", "issuer", r.Issuer, "access", r.Access)
	}
	return nil
}
