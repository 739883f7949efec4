// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"
	"fmt"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// revokeEntryCredentials revokes, with the issuer that issued them and only where they were
// issued, the entry's credentials of r's issuer, place and access but keep.
func (c *Credentials) revokeEntryCredentials(ctx context.Context, be *extensionsv1alpha1.BackupEntry, r entryRecord, keep []string) error {
	issuer, prefix, err := c.issuerWhereIssued(ctx, be, r)
	if err != nil {
		return err
	}
	return issuer.RevokeEntryCredentials(objectstore.WithOperation(ctx, objectstore.OpRevokeCredentials), be.Spec.BucketName, prefix, r.Access, keep)
}

// retireEntryCredential carries out a SettleRetire step s: s.Credential stays valid until
// s.Until, with the issuer that issued it and only where it was issued (s.AtOnce: every
// credential of its issuer, place and access but s.Keep is revoked now).
func (c *Credentials) retireEntryCredential(ctx context.Context, be *extensionsv1alpha1.BackupEntry, s SettleStep) error {
	if s.AtOnce {
		return c.revokeEntryCredentials(ctx, be, s.Credential, s.Keep)
	}
	issuer, prefix, err := c.issuerWhereIssued(ctx, be, s.Credential)
	if err != nil {
		return err
	}
	return issuer.RetireEntryCredentials(ctx, be.Spec.BucketName, prefix, s.Credential.Access, []string{s.Credential.ID}, s.Until)
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

// orAll names a record's credential, or all of its issuer's place and access (ID "").
func orAll(id string) string {
	if id == "" {
		return "all of them"
	}
	return id
}
