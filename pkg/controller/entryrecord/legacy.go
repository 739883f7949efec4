// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package entryrecord

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// The annotations in which earlier builds kept the record, one field each. They are read while
// no record of this build's form is there, and removed by the next write (Write, WriteKept): on
// an etcd-backup secret by gardener's actuator's next write of it (it resets the secret's
// annotations) and the entry's pass that follows, on a BackupEntry by its next pass (which
// writes or clears the intent) or its deletion's first pass.
const (
	legacyCredential   = "backup.extensions.gardener.cloud/entry-credential"
	legacyIssuer       = "backup.extensions.gardener.cloud/entry-credential-issuer"
	legacyIssuedIn     = "backup.extensions.gardener.cloud/entry-credential-issued-in"
	legacyAccess       = "backup.extensions.gardener.cloud/entry-credential-access"
	legacyIssuedAt     = "backup.extensions.gardener.cloud/entry-credential-issued-at"
	legacyOf           = "backup.extensions.gardener.cloud/entry-credential-of"
	legacyUnrevoked    = "backup.extensions.gardener.cloud/entry-credential-unrevoked"
	legacyRetiring     = "backup.extensions.gardener.cloud/entry-credential-retiring"
	legacyRetiringTill = "backup.extensions.gardener.cloud/entry-credential-retiring-until"

	legacyIntent  = "backup.extensions.gardener.cloud/entry-credential-intent"
	legacyIssuers = "backup.extensions.gardener.cloud/entry-credential-issuers"
)

var (
	legacySecretKeys = []string{legacyCredential, legacyIssuer, legacyIssuedIn, legacyAccess, legacyIssuedAt, legacyOf,
		legacyUnrevoked, legacyRetiring, legacyRetiringTill}
	legacyEntryKeys = []string{legacyIntent, legacyIssuers}
)

// legacyRecord reads a record in the annotations of earlier builds (ok: one is there). The JSON
// of their lists and retiring record named the fields as Credential does (encoding/json matches
// names case-insensitively).
func legacyRecord(a map[string]string) (Record, bool) {
	if !slices.ContainsFunc(legacySecretKeys, func(k string) bool { return a[k] != "" }) {
		return Record{}, false
	}
	r := Record{Entry: a[legacyOf]}
	if id := a[legacyCredential]; id != "" {
		c := Credential{ID: id, Issuer: a[legacyIssuer], IssuedIn: a[legacyIssuedIn], Access: objectstore.EntryAccess(a[legacyAccess])}
		c.IssuedAt, _ = time.Parse(time.RFC3339, a[legacyIssuedAt])
		r.Published = &c
	}
	r.Unrevoked = legacyList(a[legacyUnrevoked])
	if raw := a[legacyRetiring]; raw != "" {
		var ret Retiring
		if json.Unmarshal([]byte(raw), &ret) == nil && ret.Issuer != "" && ret.ID != "" {
			r.Retiring = &ret
		}
	}
	r.NextEnd, _ = time.Parse(time.RFC3339, a[legacyRetiringTill])
	return r, true
}

// legacyKept reads what a BackupEntry kept in the annotations of earlier builds.
func legacyKept(a map[string]string) Kept {
	k := Kept{ForDeletion: legacyList(a[legacyIssuers])}
	if raw := a[legacyIntent]; raw != "" {
		in := &Intent{}
		if json.Unmarshal([]byte(raw), in) == nil {
			k.Intent = in
		}
	}
	return k
}

// legacyList reads a JSON list of credentials, or one alone (as an earlier build wrote it);
// entries without an issuer name nothing.
func legacyList(raw string) []Credential {
	if raw == "" {
		return nil
	}
	var list []Credential
	if json.Unmarshal([]byte(raw), &list) != nil {
		var one Credential
		if json.Unmarshal([]byte(raw), &one) != nil {
			return nil
		}
		list = []Credential{one}
	}
	return slices.DeleteFunc(list, func(c Credential) bool { return c.Issuer == "" })
}
