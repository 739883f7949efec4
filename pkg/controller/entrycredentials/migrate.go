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

// MigrateObserved is what a Migrate knows of the credential it leaves behind (MigrationRetiree's
// Retiree and ByID) once it has read the settings and built the issuer that issued it.
type MigrateObserved struct {
	Retiree entryrecord.Credential
	ByID    bool
	// Pending is the error of a seed configuration still awaited (a
	// provider.SeedConfigPendingError; nil: none).
	Pending error
	// IssuerErr is why the issuer could not be built (nil: it was, or the provider builds none);
	// InvalidConfig says it is objectstore.ErrInvalidConfig (the operator's, not retried).
	IssuerErr     error
	InvalidConfig bool
	// NoIssuer: the operator's credentials build no such issuer now.
	NoIssuer bool
	// HeldID is the ID of the credential the etcd-backup secret's data holds, as the issuer reads it.
	HeldID string
	Grace  time.Duration
	Now    time.Time
}

// MigrateAction is what a Migrate does with the credential it leaves behind.
type MigrateAction int

const (
	// MigrateNothing does nothing: the secret holds no credential of the entry's to retire.
	MigrateNothing MigrateAction = iota
	// MigrateWait fails the Migrate with MigratePlan.Why, to be retried.
	MigrateWait
	// MigrateCannot lets the Migrate go on with an event saying why the credential cannot be
	// retired from here (MigratePlan.Why): the entry's first issuance on its new seed revokes it.
	MigrateCannot
	// MigrateRetire retires the credential until MigratePlan.Until.
	MigrateRetire
)

// MigratePlan is what a Migrate does with the credential it leaves behind: Err is the error of a
// MigrateWait, Why the reason of a MigrateCannot, Until the end of a MigrateRetire.
type MigratePlan struct {
	Action MigrateAction
	Until  time.Time
	Why    string
	Err    error
}

// DecideMigrate is what a Migrate does with the credential it leaves behind (o); it calls
// nothing. The migration waits only for what comes by itself (the seed's configuration, an
// issuer that fails for a while), never for what cannot be done from here (finding 6 of issue
// 44: an issuer that cannot be built held the finalizer for good).
func DecideMigrate(o MigrateObserved) MigratePlan {
	switch {
	case o.Pending != nil: // the configuration comes, and with it the migration grace
		return MigratePlan{Action: MigrateWait, Err: o.Pending}
	case o.IssuerErr != nil && !o.InvalidConfig:
		return MigratePlan{Action: MigrateWait, Err: fmt.Errorf("building issuer %s to retire the entry's credential %s: %w", o.Retiree.Issuer, o.Retiree.ID, o.IssuerErr)}
	case o.IssuerErr != nil:
		return MigratePlan{Action: MigrateCannot, Why: o.IssuerErr.Error()}
	case o.NoIssuer:
		return MigratePlan{Action: MigrateCannot, Why: "the operator's credentials build no such issuer now"}
	case o.ByID && o.HeldID != o.Retiree.ID:
		return MigratePlan{} // the write the intent announced did not happen: the secret holds no credential of its
	}
	return MigratePlan{Action: MigrateRetire, Until: o.Now.Add(o.Grace)}
}

// retireMigratedEntryCredential lets the entry's own credential, which it leaves behind on this
// seed, stay valid for the migration grace period (the source's last snapshots), then end: it
// observes, decides (MigrationRetiree, DecideMigrate) and carries out the plan.
func (c *Credentials) retireMigratedEntryCredential(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	current, err := c.ReadEtcdBackupSecret(ctx, be)
	if err != nil || current == nil {
		return err
	}
	record, ours, err := entryrecord.Read(be.Name, current.Annotations)
	if err != nil {
		return fmt.Errorf("retiring the credential the entry leaves behind: %w", err)
	}
	r, byID := MigrationRetiree(record, ours, intentOf(be))
	if r == nil {
		return nil
	}
	o := MigrateObserved{Retiree: *r, ByID: byID, Now: time.Now()}
	// An entry's providerConfig that does not decode: the configuration in force builds the
	// issuer (connect.EntryConfig's fallback), and the migration grace is its default.
	settings, cfg, err := c.EntrySettings(be)
	if pending := (*provider.SeedConfigPendingError)(nil); errors.As(err, &pending) {
		o.Pending = err
	}
	o.Grace = settings.MigrationGrace()
	issuer, err := c.entryIssuer(ctx, be, cfg, r.Issuer)
	o.IssuerErr, o.InvalidConfig, o.NoIssuer = err, errors.Is(err, objectstore.ErrInvalidConfig), err == nil && issuer == nil
	if issuer != nil {
		o.HeldID = issuer.CredentialID(current.Data)
	}
	plan := DecideMigrate(o)
	switch plan.Action {
	case MigrateWait:
		return plan.Err // retried
	case MigrateCannot:
		c.recorder.Eventf(be, nil, corev1.EventTypeWarning, ReasonEntryCredentialRetired, "Migrate",
			"The entry's credential %s of issuer %s cannot be retired from here (%s): the entry's first issuance on its new seed revokes it", r.ID, r.Issuer, plan.Why)
		return nil
	case MigrateRetire:
		prefix, err := objectstore.EntryPrefix(be.Name)
		if err != nil {
			return err
		}
		if err := issuer.RetireEntryCredentials(ctx, be.Spec.BucketName, prefix, r.Access, []string{r.ID}, plan.Until); err != nil {
			return fmt.Errorf("retiring the entry's credential %s: %w", r.ID, err)
		}
		c.recorder.Eventf(be, nil, corev1.EventTypeNormal, ReasonEntryCredentialRetired, "Migrate",
			"The entry's credential %s of issuer %s stays valid until %s (migrationGracePeriod), then ends", r.ID, r.Issuer, plan.Until.UTC().Format(time.RFC3339))
	}
	return nil
}
