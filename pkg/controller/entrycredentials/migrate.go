// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entrycredentials

import "github.com/gardener-extension-backup/gardener-extension-backup/pkg/controller/entryrecord"

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
