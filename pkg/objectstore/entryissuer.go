// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package objectstore

import (
	"context"
	"time"
)

// EntryAccess is what an entry's credential may do under the entry's prefix.
type EntryAccess string

const (
	// EntryReadWrite is what etcd-backup-restore does for a shoot: snapshots, garbage
	// collection, restoration.
	EntryReadWrite EntryAccess = "read-write"
	// EntryReadOnly is what a `source-` entry of a control plane migration needs: restoring
	// from the source seed's backups, never changing them.
	EntryReadOnly EntryAccess = "read-only"
)

// EntryCredentialIssuer issues credentials that reach one entry's prefix of a bucket and nothing
// else: the principal of one BackupEntry. A provider builds one by name
// (provider.Config.NewEntryIssuer) from the operator's credentials. Every principal it creates
// is marked with the bucket, the prefix and the access (a tag, a name or a description), so that
// the issuer finds it again; an entry's principals of one access are independent of those of
// the other (a `source-` entry and the entry it restores share the prefix).
type EntryCredentialIssuer interface {
	// IssueEntryCredential returns a new credential for prefix of bucket with access. It is
	// usable when returned: the issuer has listed prefix and read the bucket's versioning with
	// it (stores whose IAM is eventually consistent wait for that). The credentials named in
	// inUse stay valid, and so do retiring ones (RetireEntryCredentials) before their time;
	// every other credential of the entry with this access is revoked first, so that a
	// credential issued by a pass that failed before publishing it does not outlive the next
	// pass. At a limit of the store (the number of IAM users) it returns an error matching
	// ErrQuotaExceeded.
	IssueEntryCredential(ctx context.Context, bucket string, prefix Prefix, access EntryAccess, inUse []string) (Credential, error)

	// RevokeEntryCredentials revokes every credential of prefix of bucket with access not named
	// in keep, retiring ones included, in the place Location names. None found is success.
	RevokeEntryCredentials(ctx context.Context, bucket string, prefix Prefix, access EntryAccess, keep []string) error

	// RetireEntryCredentials lets the credentials ids of the entry stay valid until after, and
	// no longer: the store ends them then by itself where it can (a MinIO service account's
	// expiration), otherwise EndRetiredEntryCredentials at that time does.
	RetireEntryCredentials(ctx context.Context, bucket string, prefix Prefix, access EntryAccess, ids []string, after time.Time) error

	// EndRetiredEntryCredentials revokes the credentials of prefix of bucket with access whose
	// retirement time (RetireEntryCredentials) has come, in the place Location names, and
	// returns when the next one still retiring ends (zero: none retires). Credentials not
	// retiring are left alone. The entry's controller calls it on every pass and again at the
	// time it returns, so that a retired credential ends at its time with no other event.
	EndRetiredEntryCredentials(ctx context.Context, bucket string, prefix Prefix, access EntryAccess) (next time.Time, err error)

	// CredentialID returns the ID a credential of this issuer has in data (the published
	// secret's data), or "" when data holds none of its form. It reads nothing.
	CredentialID(data map[string][]byte) string

	// Owns reports whether id is a credential of prefix of bucket with access that this issuer
	// issued and that is still valid, in the place Location names: a published credential whose
	// record was lost is taken back only when its issuer owns it.
	Owns(ctx context.Context, bucket string, prefix Prefix, access EntryAccess, id string) (bool, error)

	// Location is CredentialIssuer.Location: where the principals live.
	Location(ctx context.Context) (string, error)

	// CredentialReach says, for the EntryCredentials condition, what a credential of prefix of
	// bucket with access can reach, claiming no more than the store enforces on every request.
	CredentialReach(bucket string, prefix Prefix, access EntryAccess) string

	// Headroom reads how many more principals the store takes before IssueEntryCredential fails
	// with ErrQuotaExceeded: the principals of its kind that count against the limit (Used,
	// every one of the place Location names, not only this extension's) and the limit (Limit),
	// or Unbounded when the store documents no such limit (then Used and Limit are 0). It reads
	// only; a store that does not answer returns the error (never a guessed figure).
	Headroom(ctx context.Context) (Headroom, error)

	// SweepEntryCredentials removes, in the place Location names, the principals this issuer
	// created for bucket whose entry sweep does not keep, each with its keys and policies (an
	// IAM user's inline policy and keys before the user). It finds them by this project's marks
	// naming bucket exactly (tags, description, name): never a principal without them, never
	// another bucket's (`b1`'s survive the sweep of `b1x` and of `b`). When it keeps none, what
	// the issuer holds for the bucket as a whole goes too (MinIO's parent user and its policy).
	// It returns how many principals it kept; none found is success, and a sweep interrupted
	// anywhere converges when run again.
	SweepEntryCredentials(ctx context.Context, bucket string, sweep EntrySweep) (kept int, err error)
}

// Headroom is how close an entry issuer's place is to its limit of principals.
type Headroom struct {
	// Used and Limit count principals (IAM users of the account); Limit-Used are left.
	Used, Limit int
	// Unbounded: the store documents no limit of the principals an issuer creates.
	Unbounded bool
	// Principals names what is counted, for messages ("IAM users of the account").
	Principals string
}

// Left is how many more principals the place takes (never negative; 0 when Unbounded).
func (h Headroom) Left() int {
	if h.Unbounded || h.Used >= h.Limit {
		return 0
	}
	return h.Limit - h.Used
}

// EntrySweep says which of a bucket's entry principals SweepEntryCredentials keeps.
type EntrySweep struct {
	// Live are the prefixes of the entries that exist: their principals are kept, of either
	// access.
	Live []Prefix
	// KeepReadOnly keeps every read-only principal: a `source-` entry's, issued by the seed its
	// shoot migrated to, which this seed's controllers do not see.
	KeepReadOnly bool
	// KeepRetiring keeps a principal while it holds a credential retiring before its time (an
	// entry migrated away, RetireEntryCredentials); its other credentials go.
	KeepRetiring bool
}

// Keeps reports whether the sweep keeps a principal of prefix with access whose credentials are
// not retiring.
func (s EntrySweep) Keeps(prefix string, access EntryAccess) bool {
	if s.KeepReadOnly && access == EntryReadOnly {
		return true
	}
	for _, p := range s.Live {
		if p.String() == prefix {
			return true
		}
	}
	return false
}
