// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package backupbucket

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"

	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryinfo"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/provider"
)

// The bucket's deletion sweeps its entries' principals as a pure decision: decideDeletionSweep
// says where to sweep, sweepDeletedBucket sweeps there (decideUnbuiltIssuer: where an issuer
// that cannot be built leaves nothing to sweep), decideDeletionSwept says whether the deletion
// goes on. The record of entry issuers lives on the BackupBucket, so it is never
// dropped while a place it names may still hold a principal of the bucket.

// deletionSweepObserved is what the bucket's deletion reads before it sweeps.
type deletionSweepObserved struct {
	// record is the bucket's record of entry issuers and places (AnnotationEntryIssuers);
	// removed the places the operator says were removed by hand
	// (AnnotationEntryPrincipalsRemoved); unreadable says why either is not a record.
	record, removed entryIssuers
	unreadable      error
	// configured is the entry issuer the configuration names ("" off).
	configured string
}

// deletionSweep is one sweep of the bucket's deletion: an issuer's place, and whether that place
// is the configured issuer's, on no record.
type deletionSweep struct {
	entryinfo.IssuerPlace

	// unrecorded is the configured issuer wherever the operator's credentials reach (""), for no
	// place of it is on record: an issuer those credentials cannot build never issued there
	// (decideUnbuiltIssuer).
	unrecorded bool
}

// decideDeletionSweep is where the deletion sweeps: every place of every recorded issuer
// (issue 44 finding 8: an issuer's every place, not only its first), less those the operator
// removed by hand, and the configured issuer wherever the operator's credentials reach ("",
// unrecorded) when no place of it is on record. An unreadable record is an error naming the
// annotation: the deletion waits rather than forget where principals live.
func decideDeletionSweep(o deletionSweepObserved) ([]deletionSweep, error) {
	if o.unreadable != nil {
		return nil, fmt.Errorf("the bucket's entry principals are not swept, and the bucket is not deleted: %w", o.unreadable)
	}
	var sweeps []deletionSweep
	for _, p := range o.record.places() {
		if !o.removed.has(p.Issuer, p.Place) {
			sweeps = append(sweeps, deletionSweep{IssuerPlace: p})
		}
	}
	if o.configured != "" && len(o.record[o.configured]) == 0 && !o.removed.has(o.configured, "") {
		sweeps = append(sweeps, deletionSweep{IssuerPlace: entryinfo.IssuerPlace{Issuer: o.configured}, unrecorded: true})
		slices.SortFunc(sweeps, func(a, b deletionSweep) int {
			return cmp.Or(cmp.Compare(a.Issuer, b.Issuer), cmp.Compare(a.Place, b.Place))
		})
	}
	return sweeps, nil
}

// decideUnbuiltIssuer says whether a sweep in mode finds nothing to sweep with an issuer the
// operator's credentials do not build now (buildErr: NewEntryIssuer's error; built: whether it
// returned an issuer). Only at the configured issuer's unrecorded place of the bucket's deletion
// (sweepDeletedUnrecorded), and only when the configuration cannot build it
// (objectstore.ErrInvalidConfig, objectstore.ErrUnsupported, or no such issuer): an issuer that
// could never be built issued nothing there, as a reconcile treats it (reconcileEntryIssuers). A
// recorded place's issuer did issue, and a refused or unreachable store may hold what it issued:
// those sweeps are not done (sweepEntryIssuer reports them).
func decideUnbuiltIssuer(mode entrySweepMode, built bool, buildErr error) bool {
	if mode != sweepDeletedUnrecorded {
		return false
	}
	if buildErr == nil {
		return !built
	}
	return errors.Is(buildErr, objectstore.ErrInvalidConfig) || errors.Is(buildErr, objectstore.ErrUnsupported)
}

// entryPrincipalsLeftError is a deletion that waits for entry principals its sweeps left: each
// of left says which and why (a store's refusal, credentials that reach another place now, an
// entry that names the bucket now). It matches objectstore.ErrInvalidConfig
// (ERR_CONFIGURATION_PROBLEM): the operator grants the rights, or removes them by hand and says
// so in AnnotationEntryPrincipalsRemoved.
type entryPrincipalsLeftError struct {
	bucket string
	left   []string
}

func (e *entryPrincipalsLeftError) Error() string {
	return fmt.Sprintf("BackupBucket %q is not deleted while entry principals of it may be left: %s", e.bucket, strings.Join(e.left, "; "))
}

// Is makes errors.Is(err, objectstore.ErrInvalidConfig) true.
func (e *entryPrincipalsLeftError) Is(target error) bool {
	return target == objectstore.ErrInvalidConfig
}

// decideDeletionSwept says whether the deletion goes on after its sweeps: only when none left
// anything (left: what each that did says); else it waits, naming them all.
func decideDeletionSwept(bucket string, left []string) error {
	if len(left) == 0 {
		return nil
	}
	return &entryPrincipalsLeftError{bucket: bucket, left: left}
}

// sweepDeletedBucket sweeps every principal of the deleted bucket's entries where
// decideDeletionSweep says, then decides with decideDeletionSwept. A transient error is
// returned at once (retried).
func (a *actuator) sweepDeletedBucket(ctx context.Context, log logr.Logger, bb *extensionsv1alpha1.BackupBucket, cfg provider.Config) error {
	record, recordErr := entryIssuersOf(bb)
	removed, removedErr := decodeEntryIssuers(bb, AnnotationEntryPrincipalsRemoved)
	sweeps, err := decideDeletionSweep(deletionSweepObserved{record: record, removed: removed,
		unreadable: errors.Join(recordErr, removedErr), configured: entryIssuerName(cfg)})
	if err != nil {
		return err
	}
	var left []string
	for _, p := range sweeps {
		mode := sweepDeleted
		if p.unrecorded {
			mode = sweepDeletedUnrecorded
		}
		done, err := a.sweepEntryIssuer(ctx, log, bb, cfg, p.Issuer, p.Place, mode, "Delete")
		var refused *entrySweepRefusedError
		switch {
		case errors.As(err, &refused):
			left = append(left, refused.message)
		case err != nil:
			return err
		case !done:
			left = append(left, fmt.Sprintf("entry issuer %s kept principals in %s of BackupEntries that name the bucket now", p.Issuer, orAnywhere(p.Place)))
		}
	}
	return decideDeletionSwept(bb.Name, left)
}
