// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import (
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/apis/credentials"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"
	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// Due is when the rotation scheduler asks for a pass of an entry with settings (on), its
// rotation request ("": none) and its record: now on a request, else the earlier of the
// published credential's issue time plus the period and the end of its next retired credential
// (record.NextEnd: the pass ends it, so a retired credential ends at its time on every store).
// ok is false when nothing is ever due: no period and nothing retiring, nothing published, or no
// issue time recorded yet (the entry's next pass records one and wakes the scheduler).
func Due(settings *credentials.EntrySettings, request string, record entryrecord.Record, now time.Time) (time.Time, bool) {
	if request != "" {
		return now, true
	}
	if record.Published == nil {
		return time.Time{}, false
	}
	var due time.Time
	if period := settings.RotationPeriod(); period > 0 && !record.Published.IssuedAt.IsZero() {
		due = record.Published.IssuedAt.Add(period)
	}
	if end := record.NextEnd; !end.IsZero() && (due.IsZero() || end.Before(due)) {
		due = end
	}
	return due, !due.IsZero()
}

// DeletionRevocations are the revocations of a deleted entry's credentials, once its objects
// are gone: every credential of each issuer and access that the records kept for the deletion
// name, and of the configured issuer (settings; nil: off) with access, each issuer and access
// once (the first record's place).
func DeletionRevocations(kept []entryrecord.Credential, settings *credentials.EntrySettings, access objectstore.EntryAccess) []entryrecord.Credential {
	records := append([]entryrecord.Credential{}, kept...)
	if settings != nil {
		records = append(records, entryrecord.Credential{Issuer: settings.Issuer, Access: access})
	}
	type key struct {
		issuer string
		access objectstore.EntryAccess
	}
	done := map[key]bool{}
	var out []entryrecord.Credential
	for _, r := range records {
		if done[key{r.Issuer, r.Access}] {
			continue
		}
		done[key{r.Issuer, r.Access}] = true
		out = append(out, entryrecord.Credential{Issuer: r.Issuer, IssuedIn: r.IssuedIn, Access: r.Access})
	}
	return out
}
