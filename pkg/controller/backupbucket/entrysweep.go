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
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// The bucket's side of per-entry credentials (docs/entry-credentials.md): each entry revokes its
// own principals, but MinIO's parent user of the bucket, and the principals of entries whose
// deletion was forced (finalizer removed by hand), only a sweep of the whole bucket finds.

// AnnotationEntryIssuers records on a BackupBucket every entry issuer that issued for its
// entries, each with every place it issued in (JSON object issuer → list of Locations; an earlier
// build wrote one place as a string): the configured issuer's place on every reconcile, and,
// when the bucket switches off or hands back, every place its entries' own records name
// (entryinfo.PlacesRecordedBy). A place stays on record until a sweep there keeps nothing of the
// bucket or the operator says its principals were removed by hand
// (AnnotationEntryPrincipalsRemoved): after a switch-off the config names none, and the sweep
// and the hand-back still know whom to ask, and where.
const AnnotationEntryIssuers = "backup.extensions.gardener.cloud/entry-issuers"

// AnnotationEntryPrincipalsRemoved is the operator's word on a BackupBucket that the entry
// principals of the issuers and places it names (JSON object issuer → list of places, the form
// of AnnotationEntryIssuers) were removed by hand: places no sweep can reach (the operator's
// credentials reach another one now, or build no such issuer) are dropped from the record, and a
// hand-back or the bucket's deletion waits for them no longer. The operator owns it; the extension only reads it.
const AnnotationEntryPrincipalsRemoved = "backup.extensions.gardener.cloud/entry-principals-removed"

// ReasonEntryCredentialsNotSwept is the warning event of a sweep the store refused (no rights,
// no admin API) or that could not run where the principals were issued: what it names is left
// for the operator to remove by hand.
const ReasonEntryCredentialsNotSwept = "EntryCredentialsNotSwept"

// entrySweepMode is what a sweep keeps beside the live entries' principals.
type entrySweepMode int

const (
	// sweepDeleted is the bucket's deletion (decideDeletionSweep): every principal goes (its
	// entries are gone, refuseIfInUse), retiring and read-only ones too, for the bucket they
	// reach is gone; a refusal is returned as *entrySweepRefusedError, for the deletion waits on
	// it.
	sweepDeleted entrySweepMode = iota
	// sweepDeletedUnrecorded is the bucket's deletion with the configured issuer at no recorded
	// place: as sweepDeleted, except that an issuer the configuration cannot build there issued
	// nothing, and the sweep is done (decideUnbuiltIssuer).
	sweepDeletedUnrecorded
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

// entryIssuers is a record of entry issuers and the places each issued in.
type entryIssuers map[string][]string

// add puts place on record for issuer; it says whether the record changed.
func (r entryIssuers) add(issuer, place string) bool {
	if slices.Contains(r[issuer], place) {
		return false
	}
	r[issuer] = append(r[issuer], place)
	slices.Sort(r[issuer])
	return true
}

// has says whether place is on record for issuer.
func (r entryIssuers) has(issuer, place string) bool { return slices.Contains(r[issuer], place) }

// remove drops place of issuer from the record (an issuer without places: dropped).
func (r entryIssuers) remove(issuer, place string) {
	r[issuer] = slices.DeleteFunc(r[issuer], func(p string) bool { return p == place })
	if len(r[issuer]) == 0 {
		delete(r, issuer)
	}
}

// places lists the record's issuers and places, sorted.
func (r entryIssuers) places() []entryinfo.IssuerPlace {
	var out []entryinfo.IssuerPlace
	for _, issuer := range slices.Sorted(maps.Keys(r)) {
		for _, place := range r[issuer] {
			out = append(out, entryinfo.IssuerPlace{Issuer: issuer, Place: place})
		}
	}
	return out
}

// encode is the record as annotation AnnotationEntryIssuers holds it ("": none).
func (r entryIssuers) encode() string {
	if len(r) == 0 {
		return ""
	}
	raw, _ := json.Marshal(r)
	return string(raw)
}

// decodeEntryIssuers reads annotation key of bb in the form of AnnotationEntryIssuers (never nil).
func decodeEntryIssuers(bb *extensionsv1alpha1.BackupBucket, key string) (entryIssuers, error) {
	raw := bb.Annotations[key]
	if raw == "" {
		return entryIssuers{}, nil
	}
	record := entryIssuers{}
	if err := json.Unmarshal([]byte(raw), &record); err == nil {
		for issuer, places := range record {
			slices.Sort(places)
			record[issuer] = slices.Compact(places)
		}
		return record, nil
	}
	old := map[string]string{} // an earlier build's: one place per issuer
	if err := json.Unmarshal([]byte(raw), &old); err != nil {
		return nil, fmt.Errorf("%w: annotation %s of BackupBucket %q is not a record of entry issuers (JSON {issuer: [place, ...]}): %v", objectstore.ErrInvalidConfig, key, bb.Name, err)
	}
	for issuer, place := range old {
		record.add(issuer, place)
	}
	return record, nil
}

// entryIssuersOf reads the record (never nil).
func entryIssuersOf(bb *extensionsv1alpha1.BackupBucket) (entryIssuers, error) {
	return decodeEntryIssuers(bb, AnnotationEntryIssuers)
}

// writeEntryIssuers stores the record on bb (an empty one: the annotation removed).
func (a *actuator) writeEntryIssuers(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, record entryIssuers) error {
	base := bb.DeepCopy()
	if raw := record.encode(); raw == "" {
		delete(bb.Annotations, AnnotationEntryIssuers)
	} else {
		if bb.Annotations == nil {
			bb.Annotations = map[string]string{}
		}
		bb.Annotations[AnnotationEntryIssuers] = raw
	}
	if err := a.client.Patch(ctx, bb, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("recording the entry issuers of BackupBucket %q: %w", bb.Name, err)
	}
	return nil
}

// placesOfEntries adds to record every issuer and place that the own records of bb's entries on
// the seed name (entryinfo.PlacesRecordedBy): principals an entry could not revoke where they
// were issued, and those of an issuer the bucket never recorded. It says whether the record
// changed.
func (a *actuator) placesOfEntries(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, record entryIssuers) (bool, error) {
	changed := false
	err := eachEntryOf(ctx, a.reader, bb.Name, func(be *extensionsv1alpha1.BackupEntry) error {
		key := entryinfo.EtcdBackupSecretKey(be)
		secret, err := a.secretIfAny(ctx, key.Namespace, key.Name)
		if err != nil {
			return err
		}
		var annotations map[string]string
		if secret != nil {
			annotations = secret.Annotations
		}
		for _, p := range entryinfo.PlacesRecordedBy(be.Name, be.Annotations, annotations) {
			changed = record.add(p.Issuer, p.Place) || changed
		}
		return nil
	})
	return changed, err
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

// reconcileEntryIssuers records the configured entry issuer with the place it issues in now, on
// every reconcile (the entries issue whenever the bucket is there, its settings converged or
// not). When sweep is set (the bucket converged), it sweeps, with every recorded issuer and place
// other than the configured issuer's current one, the principals of entries that no longer
// exist, and drops the place from the record once nothing of the bucket is left there. A place
// no sweep can reach stays on record (reported by a warning event on each look) until the
// operator names it in AnnotationEntryPrincipalsRemoved. While the bucket switches off or hands
// back, the places its entries' own records name are recorded too (placesOfEntries). There is
// no periodic sweep while an issuer is configured: its entries revoke their own, and an IAM
// sweep reads every entry user of the account (SweepEntryCredentials).
func (a *actuator) reconcileEntryIssuers(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, sweep bool) error {
	record, err := entryIssuersOf(bb)
	if err != nil {
		return err
	}
	removed, err := decodeEntryIssuers(bb, AnnotationEntryPrincipalsRemoved)
	if err != nil {
		return err
	}
	configured, current := entryIssuerName(cfg), ""
	if configured != "" {
		// The place is read on every reconcile: the operator's credentials may reach another one
		// now, where the entries issue from now on; the old one stays on record. An issuer that
		// cannot be built issues nothing: the entries report why.
		issuer, err := connect.NewEntryIssuer(ctx, a.reader, bb.Spec.SecretRef, bb.Spec.Region, cfg, configured)
		if err == nil && issuer != nil {
			if current, err = issuer.Location(ctx); err != nil {
				return fmt.Errorf("finding where entry issuer %s issues: %w", configured, err)
			}
			if record.add(configured, current) {
				for _, was := range record[configured] {
					if was != current {
						a.reportMoved(log, bb, configured, was, current)
					}
				}
			}
		}
	}
	if configured == "" && len(record) > 0 || cfg.HandsBack() {
		if _, err := a.placesOfEntries(ctx, bb, record); err != nil {
			return err
		}
	}
	for _, p := range removed.places() {
		if (p.Issuer != configured || p.Place != current) && record.has(p.Issuer, p.Place) {
			log.Info("Entry principals removed by hand, by the operator's word", "issuer", p.Issuer, "place", p.Place)
			record.remove(p.Issuer, p.Place)
		}
	}
	var sweepErr error
	for _, p := range record.places() {
		if !sweep || p.Issuer == configured {
			// The configured issuer's other places: reported when it moved (reportMoved); no sweep
			// with it reaches them.
			continue
		}
		done, err := a.sweepEntryIssuer(ctx, log, bb, cfg, p.Issuer, p.Place, sweepOrphans, "Reconcile")
		if err != nil {
			sweepErr = err
			break // what changed so far is still recorded
		}
		if done {
			record.remove(p.Issuer, p.Place)
		}
	}
	if record.encode() == bb.Annotations[AnnotationEntryIssuers] {
		return sweepErr // unchanged (an earlier build's form is written anew)
	}
	return errors.Join(sweepErr, a.writeEntryIssuers(ctx, bb, record))
}

// sweepEntryIssuer sweeps bucket bb's entry principals of issuer name issued in location ("":
// wherever the operator's credentials reach now) in mode, keeping those of the BackupEntries on
// the seed that name the bucket (eachEntryOf, as refuseIfInUse finds them). done is true when
// nothing of the bucket is left with the issuer there. What cannot be swept -- a store that
// refuses (no rights, no admin API), credentials that build no such issuer or now reach another
// place -- is reported by a warning event naming what is left and, by mode: a reconcile's sweep
// is not done (the place stays on record, looked at again), a hand-back's returns
// *entrySweepRefusedError (it waits, saying so), and so does a deletion's (decideDeletionSwept).
// The exception: the configured issuer at no recorded place of a deletion
// (sweepDeletedUnrecorded) that the configuration cannot build issued nothing, and the sweep is
// done (decideUnbuiltIssuer, logged). Every other error is returned and retried.
func (a *actuator) sweepEntryIssuer(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config, name, location string, mode entrySweepMode, action string) (done bool, err error) {
	notSwept := func(why string, cause error) (bool, error) {
		msg := fmt.Sprintf("The principals that entry issuer %s made for the entries of bucket %q (in %s, marked with the bucket's name) are not swept: %s", name, bb.Name, orAnywhere(location), why)
		if cause != nil {
			msg += ": " + cause.Error()
		}
		msg += fmt.Sprintf(". Tried again on every look; once they are removed by hand, name them in annotation %s of the BackupBucket (%s)", AnnotationEntryPrincipalsRemoved, removedByHand(name, location))
		log.Info("Entry principals not swept", "issuer", name, "place", location, "why", why)
		a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonEntryCredentialsNotSwept, action, "%s", msg)
		if mode == sweepOrphans {
			return false, nil
		}
		return false, &entrySweepRefusedError{message: msg}
	}
	issuer, err := connect.NewEntryIssuer(ctx, a.reader, bb.Spec.SecretRef, bb.Spec.Region, cfg, name)
	if decideUnbuiltIssuer(mode, err == nil && issuer != nil, err) {
		why := "the operator's credentials build no such issuer"
		if err != nil {
			why = err.Error()
		}
		log.Info("Nothing to sweep: the configured entry issuer is on no record of the bucket and cannot be built, so it never issued for the bucket's entries", "issuer", name, "why", why)
		return true, nil
	}
	switch {
	case sweepRefused(err):
		return notSwept("the operator's credentials cannot build the issuer", err)
	case err != nil:
		return false, err
	case issuer == nil:
		return notSwept("the operator's credentials build no such issuer now", nil)
	}
	if location != "" {
		now, err := issuer.Location(ctx)
		if err != nil {
			return false, fmt.Errorf("finding where entry issuer %s issues: %w", name, err)
		}
		if now != location {
			return notSwept("the operator's credentials now reach "+now, nil)
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
		return notSwept("the store refused the sweep", err)
	case err != nil:
		return false, fmt.Errorf("sweeping the entry principals of bucket %q with issuer %s: %w", bb.Name, name, err)
	}
	log.Info("Swept the entries' principals", "issuer", name, "live", len(sweep.Live), "kept", kept)
	return kept == 0, nil
}

// removedByHand is what annotation AnnotationEntryPrincipalsRemoved says of issuer's place.
func removedByHand(issuer, place string) string {
	raw, _ := json.Marshal(entryIssuers{issuer: {place}})
	return string(raw)
}

// reportMoved says that the principals issuer name made for bb's entries in place was are left
// there: the operator's credentials reach now instead, which no sweep of the bucket can reach
// was. The old place stays on record, so that a switch-off and a hand-back name it, until the
// operator names it in AnnotationEntryPrincipalsRemoved.
func (a *actuator) reportMoved(log logr.Logger, bb *extensionsv1alpha1.BackupBucket, name, was, now string) {
	log.Info("Entry principals not swept: the operator's credentials reach another place", "issuer", name, "was", was, "now", now)
	a.recorder.Eventf(bb, nil, corev1.EventTypeWarning, ReasonEntryCredentialsNotSwept, "Reconcile",
		"The principals that entry issuer %s made for the entries of bucket %q in %s are not swept: the operator's credentials now reach %s, where the entries issue from now on. They stay until removed by hand; then name them in annotation %s of the BackupBucket (%s)", name, bb.Name, was, now, AnnotationEntryPrincipalsRemoved, removedByHand(name, was))
}

// sweepRefused says whether err is a store's or a configuration's refusal that retrying does not
// change.
func sweepRefused(err error) bool {
	return errors.Is(err, objectstore.ErrForbidden) || errors.Is(err, objectstore.ErrUnauthenticated) ||
		errors.Is(err, objectstore.ErrUnsupported) || errors.Is(err, objectstore.ErrInvalidConfig)
}
