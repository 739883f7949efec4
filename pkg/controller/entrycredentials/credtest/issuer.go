// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

// Package credtest holds the in-memory entry credential issuer that the tests of the entry
// credentials (package entrycredentials) and of the BackupEntry controller's wiring share.
package credtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// The calls of an Issuer that change what it holds (Fault's op).
const (
	OpIssue      = "Issue"
	OpRevoke     = "Revoke"
	OpRetire     = "Retire"
	OpEndRetired = "EndRetired"
)

// Issuer is an in-memory entry issuer: a credential is valid while it is in its set.
type Issuer struct {
	mu        sync.Mutex
	next      int
	creds     map[string]Cred
	issuances int

	// Place is where the issuer reaches (Location): it sees only the credentials issued there.
	Place string
	// IssueErr, if set, fails IssueEntryCredential (after it revoked the unused ones).
	IssueErr error
	// Limit, if set, is how many credentials an entry may have (IAM: two keys per user).
	Limit int
	// RetireErr, if set, fails RetireEntryCredentials.
	RetireErr error
	// Fault, if set, is asked before every call that changes what the issuer holds (op: OpIssue,
	// OpRevoke, OpRetire, OpEndRetired); an error fails the call, which then changes nothing.
	Fault func(op string) error
	// Now is the issuer's clock (nil: time.Now): a retiring credential ends when it has passed
	// its time, and issuance spares it until then.
	Now func() time.Time
}

// Cred is one credential an Issuer holds.
type Cred struct {
	// Location is where it lives: the issuer sees only those of its current Place.
	Location       string
	Bucket, Prefix string
	Access         objectstore.EntryAccess
	// RetireAt is when it ends (zero: not retiring).
	RetireAt time.Time
}

var _ objectstore.EntryCredentialIssuer = (*Issuer)(nil)

// NewIssuer returns an empty issuer reaching "fake:one".
func NewIssuer() *Issuer {
	return &Issuer{Place: "fake:one", creds: map[string]Cred{}}
}

func (f *Issuer) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Issuer) fault(op string) error {
	if f.Fault == nil {
		return nil
	}
	return f.Fault(op)
}

// of says whether c is a credential of bucket, prefix and access where the issuer reaches now.
func (f *Issuer) of(c Cred, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) bool {
	return c.Location == f.Place && c.Bucket == bucket && c.Prefix == prefix.String() && c.Access == access
}

// IssueEntryCredential implements objectstore.EntryCredentialIssuer: it revokes the entry's
// credentials that are neither in use nor retiring, then issues one (IAM's order).
func (f *Issuer) IssueEntryCredential(_ context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, inUse []string) (objectstore.Credential, error) {
	if err := f.fault(OpIssue); err != nil {
		return objectstore.Credential{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, c := range f.creds {
		if f.of(c, bucket, prefix, access) && !slices.Contains(inUse, id) && !c.RetireAt.After(f.now()) {
			delete(f.creds, id)
		}
	}
	if f.IssueErr != nil {
		return objectstore.Credential{}, f.IssueErr
	}
	if f.Limit > 0 && f.countOf(bucket, prefix, access) >= f.Limit {
		return objectstore.Credential{}, fmt.Errorf("%w: the entry has %d credentials", objectstore.ErrQuotaExceeded, f.Limit)
	}
	f.next++
	f.issuances++
	id := fmt.Sprintf("entry-cred-%d", f.next)
	f.creds[id] = Cred{Location: f.Place, Bucket: bucket, Prefix: prefix.String(), Access: access}
	return objectstore.Credential{ID: id, Data: map[string][]byte{"key": []byte(id)}}, nil
}

// RevokeEntryCredentials implements objectstore.EntryCredentialIssuer.
func (f *Issuer) RevokeEntryCredentials(_ context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, keep []string) error {
	if err := f.fault(OpRevoke); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, c := range f.creds {
		if f.of(c, bucket, prefix, access) && !slices.Contains(keep, id) {
			delete(f.creds, id)
		}
	}
	return nil
}

// RetireEntryCredentials implements objectstore.EntryCredentialIssuer.
func (f *Issuer) RetireEntryCredentials(_ context.Context, _ string, _ objectstore.Prefix, _ objectstore.EntryAccess, ids []string, after time.Time) error {
	if err := f.fault(OpRetire); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.RetireErr != nil {
		return f.RetireErr
	}
	for _, id := range ids {
		if c, ok := f.creds[id]; ok && c.Location == f.Place {
			c.RetireAt = after
			f.creds[id] = c
		}
	}
	return nil
}

// EndRetiredEntryCredentials implements objectstore.EntryCredentialIssuer.
func (f *Issuer) EndRetiredEntryCredentials(_ context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) (time.Time, error) {
	if err := f.fault(OpEndRetired); err != nil {
		return time.Time{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	var next time.Time
	for id, c := range f.creds {
		switch {
		case !f.of(c, bucket, prefix, access) || c.RetireAt.IsZero():
		case c.RetireAt.After(now):
			if next.IsZero() || c.RetireAt.Before(next) {
				next = c.RetireAt
			}
		default:
			delete(f.creds, id)
		}
	}
	return next, nil
}

// CredentialID implements objectstore.EntryCredentialIssuer: the data's "key".
func (f *Issuer) CredentialID(data map[string][]byte) string { return string(data["key"]) }

// Owns implements objectstore.EntryCredentialIssuer.
func (f *Issuer) Owns(_ context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.creds[id]
	return ok && f.of(c, bucket, prefix, access), nil
}

// Location implements objectstore.EntryCredentialIssuer: Place.
func (f *Issuer) Location(context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Place, nil
}

// CredentialReach implements objectstore.EntryCredentialIssuer.
func (f *Issuer) CredentialReach(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	return fmt.Sprintf("%s of %q in %q only", access, prefix.String(), bucket)
}

// Headroom is unbounded: a quota is IssueErr or Limit.
func (f *Issuer) Headroom(context.Context) (objectstore.Headroom, error) {
	return objectstore.Headroom{Unbounded: true}, nil
}

// SweepEntryCredentials implements objectstore.EntryCredentialIssuer.
func (f *Issuer) SweepEntryCredentials(_ context.Context, bucket string, sweep objectstore.EntrySweep) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := 0
	for id, c := range f.creds {
		switch {
		case c.Location != f.Place || c.Bucket != bucket:
		case sweep.Keeps(c.Prefix, c.Access) || (sweep.KeepRetiring && c.RetireAt.After(f.now())):
			kept++
		default:
			delete(f.creds, id)
		}
	}
	return kept, nil
}

// Valid returns the credential id and whether it is valid.
func (f *Issuer) Valid(id string) (Cred, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.creds[id]
	return c, ok
}

// Count is how many credentials are valid, of every entry and place.
func (f *Issuer) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.creds)
}

// Issuances is how many credentials the issuer issued.
func (f *Issuer) Issuances() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issuances
}

// Held returns every valid credential, by ID.
func (f *Issuer) Held() map[string]Cred {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]Cred, len(f.creds))
	for id, c := range f.creds {
		out[id] = c
	}
	return out
}

// countOf counts the valid credentials of one entry's access; the caller holds f.mu.
func (f *Issuer) countOf(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) int {
	n := 0
	for _, c := range f.creds {
		if f.of(c, bucket, prefix, access) {
			n++
		}
	}
	return n
}
