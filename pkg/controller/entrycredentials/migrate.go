// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"context"
	"errors"
	"fmt"
	"time"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// MigrationRetiree is the entry's own credential that a Migrate leaves behind on this seed, to
// stay valid for the migration grace period (the source's last snapshots) and then end: the one
// its record on the etcd-backup secret publishes (ours: the record is the entry's), or, when a
// restart lost that record after gardener's write, the one its intent announced; byID then says
// that the issuer must find that ID in the secret's data first (else the write did not happen,
// and the secret holds no credential of it). nil: the secret holds none of the entry's own.
func MigrationRetiree(record entryrecord.Record, ours bool, intent *entryrecord.Intent) (retiree *entryrecord.Credential, byID bool) {
	switch {
	case !ours:
		return nil, false
	case record.Published != nil:
		return record.Published, false
	case intent != nil && intent.Published != nil:
		return intent.Published, true
	}
	return nil, false
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
