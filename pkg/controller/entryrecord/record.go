// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package entryrecord owns the record of an entry's own credentials (entryCredentials): what
// the etcd-backup secret holds of its entry's credentials (Record, in annotation
// AnnotationEntryCredentialRecord) and what the BackupEntry keeps of them across the writes of
// that secret (Kept, in annotation AnnotationEntryCredentialKept). It alone encodes and decodes
// them, the forms earlier builds wrote included. A record holds IDs, issuers and places, never a
// secret value.
package entryrecord

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/gardener/gardener/extensions/pkg/controller/backupentry/genericactuator"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// AnnotationEntryCredentialRecord on an etcd-backup (or source-etcd-backup) secret is its
// Record, as JSON. The BackupEntry controller writes it after every write of gardener's generic
// actuator, which resets the secret's annotations; the BackupBucket controller reads the places
// it names for its sweeps and its hand-back.
const AnnotationEntryCredentialRecord = "backup.extensions.gardener.cloud/entry-credential-record"

// AnnotationEntryCredentialKept on a BackupEntry is its Kept, as JSON: what the entry keeps of
// its credential record where the secret's record cannot (the secret's write resets it; a
// deletion deletes the secret).
const AnnotationEntryCredentialKept = "backup.extensions.gardener.cloud/entry-credential-kept"

// Credential names one credential of an entry: where it lives and what it may do.
type Credential struct {
	// ID is the credential's ID at its issuer ("" in a revocation: every credential of the
	// entry that Issuer issued with Access).
	ID string `json:"id,omitempty"`
	// Issuer is the entry issuer that issued it (entryCredentials.issuer).
	Issuer string `json:"issuer"`
	// IssuedIn is the place the issuer issued it in (its Location: an account, a project).
	IssuedIn string                  `json:"issuedIn,omitempty"`
	Access   objectstore.EntryAccess `json:"access,omitempty"`
	// IssuedAt is when it was issued (zero: not known).
	IssuedAt time.Time `json:"issuedAt,omitzero"`
}

// SamePlace says whether c and o are of one issuer, place and access (one issuer's credentials
// of the entry that one revocation reaches).
func (c Credential) SamePlace(o Credential) bool {
	return c.Issuer == o.Issuer && c.IssuedIn == o.IssuedIn && c.Access == o.Access
}

// Retiring is a rotated-out credential and until when it stays valid.
type Retiring struct {
	Credential

	Until time.Time `json:"until"`
}

// Record is what an etcd-backup secret records of its entry's own credentials.
type Record struct {
	// Entry is the BackupEntry the record is of: two entries share a shoot namespace (a shoot
	// re-created under its name while gardenlet keeps the old entry through its deletion grace),
	// and so its etcd-backup secret, which the last to reconcile writes.
	Entry string `json:"entry"`
	// Published is the entry's own credential the secret holds (nil: the bucket's).
	Published *Credential `json:"published,omitempty"`
	// Unrevoked are credentials of the entry the secret no longer holds that could not be
	// revoked yet (every pass tries again).
	Unrevoked []Credential `json:"unrevoked,omitempty"`
	// Retiring is a rotated-out credential whose retirement its issuer has not confirmed yet.
	Retiring *Retiring `json:"retiring,omitempty"`
	// NextEnd is when the next of the entry's retired credentials ends (zero: none): the
	// rotation scheduler asks for a pass then, which ends it.
	NextEnd time.Time `json:"nextEnd,omitzero"`
	// Honoured is the rotation request (the BackupEntry's rotate annotation's value) that
	// Published was issued for ("": none), recorded until the request is removed: a pass cut
	// short, or whose removal failed, between this record and the removal leaves the request on
	// the entry, and the next pass, seeing it honoured, only finishes the rotation (retires what
	// is on record, removes the request) instead of rotating again.
	Honoured string `json:"honoured,omitempty"`
}

// Empty says whether r records nothing but its entry.
func (r Record) Empty() bool {
	return r.Published == nil && len(r.Unrevoked) == 0 && r.Retiring == nil && r.NextEnd.IsZero()
}

// Credentials are the credentials r names: the published one, the unrevoked ones, the retiring
// one.
func (r Record) Credentials() []Credential {
	return credentials(r.Published, r.Unrevoked, r.Retiring)
}

// credentials lists one, many and retiring (nil: none) in that order: a record's and an intent's
// credentials alike.
func credentials(one *Credential, many []Credential, retiring *Retiring) []Credential {
	var out []Credential
	if one != nil {
		out = append(out, *one)
	}
	out = append(out, many...)
	if retiring != nil {
		out = append(out, retiring.Credential)
	}
	return out
}

// Intent is what a pass is about to record on the etcd-backup secret once gardener's actuator
// has written the data the pass decided: that write resets the secret's annotations, and a
// restart before the pass records anew would leave a rotated-out credential neither retiring nor
// on any record, and one to revoke unrevoked.
type Intent struct {
	// Published is the entry's own credential the secret is to hold (nil: the bucket's).
	Published *Credential `json:"published,omitempty"`
	// Retire is the rotated-out credential to retire, Revoke those to revoke.
	Retire *Retiring    `json:"retire,omitempty"`
	Revoke []Credential `json:"revoke,omitempty"`
	// Rotation is why the previous credential was replaced ("": no rotation), Request the
	// rotation request it honours ("": none).
	Rotation string `json:"rotation,omitempty"`
	Request  string `json:"request,omitempty"`
}

// Credentials are the credentials in names: the one to publish, the ones to revoke, the one to
// retire (none for nil).
func (in *Intent) Credentials() []Credential {
	if in == nil {
		return nil
	}
	return credentials(in.Published, in.Revoke, in.Retire)
}

// Kept is what a BackupEntry keeps of its credential record.
type Kept struct {
	// Intent is the record a pass is about to write (nil: none pending). The pass writes it
	// before gardener's actuator writes the secret and removes it once the secret's record says
	// the same.
	Intent *Intent `json:"intent,omitempty"`
	// ForDeletion are the entry's credentials of the secret's record and of Intent, kept across
	// the passes of its deletion (gardener's actuator deletes the secret in the first); they go
	// with the entry.
	ForDeletion []Credential `json:"forDeletion,omitempty"`
}

// Credentials are the credentials k names: those kept for the deletion and those of its intent.
func (k Kept) Credentials() []Credential {
	return append(append([]Credential{}, k.ForDeletion...), k.Intent.Credentials()...)
}

// Empty says whether k keeps nothing.
func (k Kept) Empty() bool { return k.Intent == nil && len(k.ForDeletion) == 0 }

// Of says whether the record on an etcd-backup secret with annotations is entry's: the record
// names its entry, or (none there) the secret's last writer is entry (gardener's actuator writes
// created-by, and the entry's pass records right after its write).
func Of(entry string, annotations map[string]string) bool {
	if r, ok, err := decodeRecord(annotations); err == nil && ok && r.Entry != "" {
		return r.Entry == entry
	}
	return annotations[genericactuator.AnnotationKeyCreatedByBackupEntry] == entry
}

// Read returns entry's record on an etcd-backup secret with annotations (nil annotations: no
// secret), and whether the secret holds entry's records at all (Of). Another entry's record is
// not entry's: Read returns an empty record of entry and false. A record that does not decode
// is an error (the secret's last writer's, Of): what it names (credentials still to revoke or
// retiring) is not known, and a caller that took it for an empty record would forget them.
func Read(entry string, annotations map[string]string) (Record, bool, error) {
	if !Of(entry, annotations) {
		return Record{Entry: entry}, false, nil
	}
	r, _, err := decodeRecord(annotations)
	if err != nil {
		return Record{Entry: entry}, true, err
	}
	r.Entry = entry
	return r, true, nil
}

// Write sets r on annotations (an etcd-backup secret's) in the form of this build, and removes
// what earlier builds wrote: the first write of a record after an update rewrites it (the
// reconcile's pass, right after gardener's write of the secret). A record of nothing (Empty)
// removes the annotation: the secret's last writer (Of) is then the entry it is of.
func Write(annotations map[string]string, r Record) {
	for _, k := range legacySecretKeys {
		delete(annotations, k)
	}
	if r.Empty() {
		delete(annotations, AnnotationEntryCredentialRecord)
		return
	}
	raw, _ := json.Marshal(r)
	annotations[AnnotationEntryCredentialRecord] = string(raw)
}

// Stale says whether annotations (an etcd-backup secret's) hold a record in an earlier build's
// form.
func Stale(annotations map[string]string) bool {
	return slices.ContainsFunc(legacySecretKeys, func(k string) bool { _, ok := annotations[k]; return ok })
}

// ReadKept returns what a BackupEntry with annotations keeps of its credential record.
func ReadKept(annotations map[string]string) Kept {
	var k Kept
	if raw := annotations[AnnotationEntryCredentialKept]; raw != "" {
		if json.Unmarshal([]byte(raw), &k) == nil {
			return k
		}
		return Kept{}
	}
	return legacyKept(annotations)
}

// WriteKept sets k on annotations (a BackupEntry's) in the form of this build, and removes what
// earlier builds wrote; nothing kept removes the annotation. It returns whether annotations
// changed.
func WriteKept(annotations map[string]string, k Kept) bool {
	changed := false
	for _, key := range legacyEntryKeys {
		if _, ok := annotations[key]; ok {
			delete(annotations, key)
			changed = true
		}
	}
	old, had := annotations[AnnotationEntryCredentialKept]
	if k.Empty() {
		delete(annotations, AnnotationEntryCredentialKept)
		return changed || had
	}
	raw, _ := json.Marshal(k)
	annotations[AnnotationEntryCredentialKept] = string(raw)
	return changed || old != string(raw)
}

// decodeRecord reads the record in annotations, in this build's form or an earlier one's; ok is
// false when there is none. A record in this build's form that does not decode is an error.
func decodeRecord(annotations map[string]string) (Record, bool, error) {
	if raw := annotations[AnnotationEntryCredentialRecord]; raw != "" {
		var r Record
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return Record{}, false, fmt.Errorf("the entry credential record (annotation %s of the etcd-backup secret) does not decode, so the credentials it names are not known (correct it, or revoke what it names and remove it, by hand): %w", AnnotationEntryCredentialRecord, err)
		}
		return r, true, nil
	}
	r, ok := legacyRecord(annotations)
	return r, ok, nil
}
