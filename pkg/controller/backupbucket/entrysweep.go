// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/connect"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// The bucket's side of per-entry credentials (docs/entry-credentials.md): each entry revokes its
// own principals, but MinIO's parent user of the bucket, and the principals of entries whose
// deletion was forced (finalizer removed by hand), only a sweep of the whole bucket finds.

// AnnotationEntryIssuers records on a BackupBucket the entry issuers entryCredentials named for
// it, each with the place it issues in (JSON object issuer → Location): after a switch-off the
// config names none, and the sweep still knows whom to ask, and where.
const AnnotationEntryIssuers = "backup.extensions.gardener.cloud/entry-issuers"

// ReasonEntryCredentialsNotSwept is the warning event of a sweep the store refused (no rights,
// no admin API) or that could not run where the principals were issued: what it names is left
// for the operator to remove by hand.
const ReasonEntryCredentialsNotSwept = "EntryCredentialsNotSwept"

// entrySweepMode is what a sweep keeps beside the live entries' principals.
type entrySweepMode int

const (
	// sweepDeleted is the bucket's deletion: every principal goes (its entries are gone,
	// refuseIfInUse), retiring and read-only ones too, for the bucket they reach is gone.
	sweepDeleted entrySweepMode = iota
	// sweepOrphans is a switch-off or an issuer no longer configured: only principals of
	// entries that no longer exist go; a live entry revokes its own when reconciled, a retiring
	// one ends at its time, a read-only one belongs to a source- entry on another seed.
	sweepOrphans
	// sweepHandBack is a hand-back (decideHandBack), once every secret the bucket's shoots read
	// holds the operator's credentials: every principal goes, live entries' too; a refusal is
	// returned as *entrySweepRefusedError, for the hand-back waits on it.
	sweepHandBack
)

// entrySweepRefusedError is a sweep in mode sweepHandBack that the store or the configuration
// refused; its message names what is left and why (the event's).
type entrySweepRefusedError struct{ message string }

func (e *entrySweepRefusedError) Error() string { return e.message }

// entryIssuersOf reads the record (never nil).
func entryIssuersOf(bb *extensionsv1alpha1.BackupBucket) (map[string]string, error) {
	record := map[string]string{}
	if raw := bb.Annotations[AnnotationEntryIssuers]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &record); err != nil {
			return nil, fmt.Errorf("%w: annotation %s of BackupBucket %q is not this extension's record of entry issuers (JSON {issuer: place}): %v", objectstore.ErrInvalidConfig, AnnotationEntryIssuers, bb.Name, err)
		}
	}
	return record, nil
}

// writeEntryIssuers stores the record on bb (an empty one: the annotation removed).
func (a *actuator) writeEntryIssuers(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, record map[string]string) error {
	base := bb.DeepCopy()
	if len(record) == 0 {
		delete(bb.Annotations, AnnotationEntryIssuers)
	} else {
		raw, _ := json.Marshal(record)
		if bb.Annotations == nil {
			bb.Annotations = map[string]string{}
		}
		bb.Annotations[AnnotationEntryIssuers] = string(raw)
	}
	if err := a.client.Patch(ctx, bb, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("recording the entry issuers of BackupBucket %q: %w", bb.Name, err)
	}
	return nil
}

// entryIssuerName is the entry issuer cfg names ("" when entryCredentials is off).
func entryIssuerName(cfg provider.Config) string {
	if p, ok := cfg.ProviderConfig.(credentials.EntryPolicy); ok {
		if s := p.EntryCredentialSettings(); s != nil {
			return s.Issuer
		}
	}
	return ""
}

// reconcileEntryIssuers records the configured entry issuer, and sweeps with every recorded one
// that is not configured (switched off, or another issuer now) the principals of entries that no
// longer exist, dropping it from the record once nothing of the bucket is left with it. There is
// no periodic sweep while an issuer is configured: its entries revoke their own, and an IAM
// sweep reads every entry user of the account (SweepEntryCredentials).
func (a *actuator) reconcileEntryIssuers(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) error {
	record, err := entryIssuersOf(bb)
	if err != nil {
		return err
	}
	before := maps.Clone(record)
	configured := entryIssuerName(cfg)
	if configured != "" {
		// The place is read on every reconcile: the operator's credentials may reach another one
		// now, where the entries issue from now on, and which a later sweep must look in. An
		// issuer that cannot be built issues nothing: the entries report why.
		issuer, err := connect.NewEntryIssuer(ctx, a.reader, bb.Spec.SecretRef, bb.Spec.Region, cfg, configured)
		if err == nil && issuer != nil {
			now, err := issuer.Location(ctx)
			if err != nil {
				return fmt.Errorf("finding where entry issuer %s issues: %w", configured, err)
			}
			if was, known := record[configured]; known && was != now {
				a.reportMoved(log, bb, configured, was, now)
			}
			record[configured] = now
		}
	}
	var sweepErr error
	for _, name := range slices.Sorted(maps.Keys(record)) {
		if name == configured {
			continue
		}
		done, err := a.sweepEntryIssuer(ctx, log, bb, cfg, name, record[name], sweepOrphans, "Reconcile")
		if err != nil {
			sweepErr = err
			break // what changed so far is still recorded
		}
		if done {
			delete(record, name)
		}
	}
	if maps.Equal(record, before) {
		return sweepErr
	}
	return errors.Join(sweepErr, a.writeEntryIssuers(ctx, bb, record))
}

// sweepDeletedBucket sweeps every principal of the deleted bucket's entries, with the configured
// entry issuer and every recorded one. A store that refuses (sweepEntryIssuer) does not block
// the deletion: the bucket and every object its principals could reach are gone.
func (a *actuator) sweepDeletedBucket(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) error {
	record, err := entryIssuersOf(bb)
	if err != nil {
		log.Info("The record of entry issuers is unreadable: only the configured one sweeps", "error", err.Error())
		record = map[string]string{}
	}
	if name := entryIssuerName(cfg); name != "" {
		if _, known := record[name]; !known {
			record[name] = "" // where the operator's credentials reach now
		}
	}
	for _, name := range slices.Sorted(maps.Keys(record)) {
		if _, err := a.sweepEntryIssuer(ctx, log, bb, cfg, name, record[name], sweepDeleted, "Delete"); err != nil {
			return err
		}
	}
	return nil
}

// sweepEntryIssuer sweeps bucket bb's entry principals of issuer name issued in location ("":
// wherever the operator's credentials reach now) in mode, keeping those of the BackupEntries on
// the seed that name the bucket (eachEntryOf, as refuseIfInUse finds them). done is true when
// nothing of the bucket is left with the issuer, or nothing can ever be swept by it: a store
// that refuses the sweep (no rights, no admin API, credentials that cannot issue), and
// credentials that now reach another place, are reported by a warning event naming what is left,
// not by an error, so that neither a deletion nor a reconcile waits on them forever (a refusal
// is tried again at the next reconcile, not at a deletion); every other error is returned and
// retried.
func (a *actuator) sweepEntryIssuer(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, name, location string, mode entrySweepMode, action string) (done bool, err error) {
	// notSwept reports what is left; final says that retrying cannot change it.
	notSwept := func(why string, cause error, final bool) (bool, error) {
		msg := fmt.Sprintf("The principals that entry issuer %s made for the entries of bucket %q (marked with the bucket's name) are not swept and stay until removed by hand: %s", name, bb.Name, why)
		if cause != nil {
			msg += ": " + cause.Error()
		}
		log.Info("Entry principals not swept", "issuer", name, "why", why)
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonEntryCredentialsNotSwept, action, "%s", msg)
		if mode == sweepHandBack && !final {
			return false, &entrySweepRefusedError{message: msg}
		}
		return final || mode == sweepDeleted, nil
	}
	issuer, err := connect.NewEntryIssuer(ctx, a.reader, bb.Spec.SecretRef, bb.Spec.Region, cfg, name)
	switch {
	case sweepRefused(err):
		return notSwept("the operator's credentials cannot build the issuer", err, false)
	case err != nil:
		return false, err
	case issuer == nil:
		return notSwept("the operator's credentials issue none", nil, true)
	}
	if location != "" {
		now, err := issuer.Location(ctx)
		if err != nil {
			return false, fmt.Errorf("finding where entry issuer %s issues: %w", name, err)
		}
		if now != location {
			return notSwept(fmt.Sprintf("they were issued in %s and the operator's credentials now reach %s", location, now), nil, true)
		}
	}
	sweep := objectstore.EntrySweep{KeepReadOnly: mode == sweepOrphans, KeepRetiring: mode == sweepOrphans}
	if mode != sweepHandBack {
		err = eachEntryOf(ctx, a.reader, bb.Name, func(be *extensionsv1alpha1.BackupEntry) error {
			if p, err := objectstore.EntryPrefix(be.Name); err == nil {
				sweep.Live = append(sweep.Live, p)
			}
			return nil
		})
	}
	if err != nil {
		return false, err
	}
	kept, err := issuer.SweepEntryCredentials(ctx, bb.Name, sweep)
	switch {
	case sweepRefused(err):
		return notSwept("the store refused the sweep", err, false)
	case err != nil:
		return false, fmt.Errorf("sweeping the entry principals of bucket %q with issuer %s: %w", bb.Name, name, err)
	}
	log.Info("Swept the entries' principals", "issuer", name, "live", len(sweep.Live), "kept", kept)
	return kept == 0, nil
}

// reportMoved says that the principals issuer name made for bb's entries in place was are left
// there: the operator's credentials reach now instead, which no sweep of the bucket can reach
// was (each entry's record keeps its own credential and says so).
func (a *actuator) reportMoved(log logr.Logger, bb *extensionsv1alpha1.BackupBucket, name, was, now string) {
	log.Info("Entry principals not swept: the operator's credentials reach another place", "issuer", name, "was", was, "now", now)
	a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonEntryCredentialsNotSwept, "Reconcile",
		"The principals that entry issuer %s made for the entries of bucket %q in %s are not swept and stay until removed by hand: the operator's credentials now reach %s, where the entries issue from now on", name, bb.Name, was, now)
}

// sweepRefused says whether err is a store's or a configuration's refusal that retrying does not
// change.
func sweepRefused(err error) bool {
	return errors.Is(err, objectstore.ErrForbidden) || errors.Is(err, objectstore.ErrUnauthenticated) ||
		errors.Is(err, objectstore.ErrUnsupported) || errors.Is(err, objectstore.ErrInvalidConfig)
}
