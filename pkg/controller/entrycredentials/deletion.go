// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"
	"fmt"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
)

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
