// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/minio/madmin-go/v3"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// minioEntryIssuer issues an entry's credentials as MinIO service accounts, one per issuance,
// each with an inline policy that reaches only the entry's prefix (entryPolicy). Their parent
// is one MinIO user per bucket (entryParent) whose own policy is the bucket's (a service
// account can do only what both its policy and its parent's allow); its secret is never handed
// out. A service account is found by its description, which names the bucket, the prefix and the
// access; a retiring one carries MinIO's expiration, and MinIO refuses it after that by itself.
type minioEntryIssuer struct {
	*minioIssuer

	provider *Provider
	region   string
}

var _ objectstore.EntryCredentialIssuer = (*minioEntryIssuer)(nil)

// MinIO's bounds of a service account's expiration (minio cmd/iam-store.go:87-88), which MinIO
// checks against its own clock when the request arrives (validateSvcExpirationInUTC):
// minioExpiryMargin keeps a shortest grace inside them.
const (
	minioMinExpiry    = 15 * time.Minute
	minioMaxExpiry    = 365 * 24 * time.Hour
	minioExpiryMargin = time.Minute
)

// entryParent is the MinIO user whose service accounts are the entries' credentials of bucket:
// "gebe" and 16 hex digits of the bucket name's SHA-256 (MinIO access keys are at most 20
// characters). Its policy, entryParentPolicy(bucket), is named after the whole bucket name.
func entryParent(bucket string) string {
	sum := sha256.Sum256([]byte(bucket))
	return "gebe" + hex.EncodeToString(sum[:])[:16]
}

// MinIOEntryParent is entryParent, for tests that look for what a sweep leaves.
func MinIOEntryParent(bucket string) string { return entryParent(bucket) }

func entryParentPolicy(bucket string) string { return "gardener-backup-entries-" + bucket }

// entryDescription marks a service account as the credential of prefix of bucket with access
// (MinIO allows 256 characters; longer names are hashed).
func entryDescription(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	d := fmt.Sprintf("gardener-extension-backup bucket=%s prefix=%s access=%s", bucket, prefix.String(), access)
	if len(d) <= 256 {
		return d
	}
	sum := sha256.Sum256([]byte(d))
	return "gardener-extension-backup entry sha256=" + hex.EncodeToString(sum[:])
}

// ensureParent creates the bucket's parent user with the bucket's policy unless it is there.
func (m *minioEntryIssuer) ensureParent(ctx context.Context, bucket string) error {
	policy, err := bucketPolicy(bucket)
	if err != nil {
		return err
	}
	if err := m.admin.AddCannedPolicy(ctx, entryParentPolicy(bucket), policy); err != nil {
		return minioError("writing the MinIO policy of the bucket's entries", err)
	}
	parent := entryParent(bucket)
	info, err := m.admin.GetUserInfo(ctx, parent)
	if err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminNoSuchUser" {
		return minioError("reading MinIO user "+parent, err)
	}
	if err != nil {
		secret := make([]byte, 24)
		_, _ = rand.Read(secret)
		if err := m.admin.AddUser(ctx, parent, hex.EncodeToString(secret)); err != nil {
			return minioError("creating MinIO user "+parent, err)
		}
	}
	if err != nil || info.PolicyName != entryParentPolicy(bucket) {
		if _, err := m.admin.AttachPolicy(ctx, madmin.PolicyAssociationReq{Policies: []string{entryParentPolicy(bucket)}, User: parent}); err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminPolicyChangeAlreadyApplied" {
			return minioError("attaching the policy of the bucket's entries", err)
		}
	}
	return nil
}

// accounts lists the service accounts of prefix of bucket with access.
func (m *minioEntryIssuer) accounts(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) ([]madmin.ServiceAccountInfo, error) {
	resp, err := m.admin.ListServiceAccounts(ctx, entryParent(bucket))
	if err != nil {
		if madmin.ToErrorResponse(err).Code == "XMinioAdminNoSuchUser" {
			return nil, nil
		}
		return nil, minioError("listing the MinIO service accounts of the bucket's entries", err)
	}
	want := entryDescription(bucket, prefix, access)
	var out []madmin.ServiceAccountInfo
	for _, a := range resp.Accounts {
		if a.Description == want {
			out = append(out, a)
		}
	}
	return out, nil
}

// retiring reports whether a service account has an expiration still ahead.
func retiring(a madmin.ServiceAccountInfo, now time.Time) bool {
	return a.Expiration != nil && !a.Expiration.IsZero() && a.Expiration.Unix() > 0 && a.Expiration.After(now)
}

// IssueEntryCredential implements objectstore.EntryCredentialIssuer.
func (m *minioEntryIssuer) IssueEntryCredential(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, inUse []string) (objectstore.Credential, error) {
	policy, err := entryPolicy(bucket, prefix, access)
	if err != nil {
		return objectstore.Credential{}, err
	}
	if err := m.revoke(ctx, bucket, prefix, access, inUse, true); err != nil {
		return objectstore.Credential{}, err
	}
	if err := m.ensureParent(ctx, bucket); err != nil {
		return objectstore.Credential{}, err
	}
	suffix, secret := make([]byte, 9), make([]byte, 20) // secret: 40 hex digits, MinIO's maximum
	_, _ = rand.Read(suffix)
	_, _ = rand.Read(secret)
	accessKey, secretKey := "gbe"+hex.EncodeToString(suffix)[:17], hex.EncodeToString(secret)
	if _, err := m.admin.AddServiceAccount(ctx, madmin.AddServiceAccountReq{
		TargetUser: entryParent(bucket), AccessKey: accessKey, SecretKey: secretKey, Policy: policy,
		Description: entryDescription(bucket, prefix, access),
	}); err != nil {
		return objectstore.Credential{}, minioError("creating the MinIO service account of "+prefix.String(), err)
	}
	data := maps.Clone(m.template)
	data[KeyAccessKeyID], data[KeySecretAccessKey] = []byte(accessKey), []byte(secretKey)
	if err := m.provider.proveEntryCredential(ctx, data, m.region, bucket, prefix); err != nil {
		_ = m.admin.DeleteServiceAccount(ctx, accessKey)
		return objectstore.Credential{}, err
	}
	return objectstore.Credential{ID: accessKey, Data: data}, nil
}

// RevokeEntryCredentials implements objectstore.EntryCredentialIssuer.
func (m *minioEntryIssuer) RevokeEntryCredentials(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, keep []string) error {
	return m.revoke(ctx, bucket, prefix, access, keep, false)
}

// revoke deletes the entry's service accounts not kept; sparing retiring ones before their time
// when spareRetiring.
func (m *minioEntryIssuer) revoke(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, keep []string, spareRetiring bool) error {
	accounts, err := m.accounts(ctx, bucket, prefix, access)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, a := range accounts {
		if slices.Contains(keep, a.AccessKey) || (spareRetiring && retiring(a, now)) {
			continue
		}
		if err := m.admin.DeleteServiceAccount(ctx, a.AccessKey); err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminServiceAccountNotFound" {
			return minioError("deleting MinIO service account "+a.AccessKey, err)
		}
	}
	return nil
}

// RetireEntryCredentials implements objectstore.EntryCredentialIssuer with MinIO's expiration,
// which MinIO bounds to [15m, 365d] from now: a shorter grace is extended to 15 minutes, and
// none (after not in the future) deletes at once.
func (m *minioEntryIssuer) RetireEntryCredentials(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, ids []string, after time.Time) error {
	accounts, err := m.accounts(ctx, bucket, prefix, access)
	if err != nil {
		return err
	}
	now := time.Now()
	at := after
	if lo := now.Add(minioMinExpiry + minioExpiryMargin); at.Before(lo) {
		at = lo
	}
	if hi := now.Add(minioMaxExpiry - minioExpiryMargin); at.After(hi) {
		at = hi
	}
	for _, a := range accounts {
		if !slices.Contains(ids, a.AccessKey) {
			continue
		}
		if !after.After(now) {
			if err := m.admin.DeleteServiceAccount(ctx, a.AccessKey); err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminServiceAccountNotFound" {
				return minioError("deleting MinIO service account "+a.AccessKey, err)
			}
			continue
		}
		if retiring(a, now) && !a.Expiration.After(at) {
			continue // already ends no later
		}
		if err := m.admin.UpdateServiceAccount(ctx, a.AccessKey, madmin.UpdateServiceAccountReq{NewExpiration: &at}); err != nil {
			return minioError("setting the expiration of MinIO service account "+a.AccessKey, err)
		}
	}
	return nil
}

// EndRetiredEntryCredentials implements objectstore.EntryCredentialIssuer: MinIO refuses a
// service account past its expiration by itself; the expired ones are deleted here too.
func (m *minioEntryIssuer) EndRetiredEntryCredentials(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) (time.Time, error) {
	accounts, err := m.accounts(ctx, bucket, prefix, access)
	if err != nil {
		return time.Time{}, err
	}
	now := time.Now()
	var next time.Time
	for _, a := range accounts {
		switch {
		case a.Expiration == nil || a.Expiration.IsZero() || a.Expiration.Unix() <= 0: // not retiring
		case a.Expiration.After(now):
			if next.IsZero() || a.Expiration.Before(next) {
				next = *a.Expiration
			}
		default:
			if err := m.admin.DeleteServiceAccount(ctx, a.AccessKey); err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminServiceAccountNotFound" {
				return next, minioError("deleting MinIO service account "+a.AccessKey, err)
			}
		}
	}
	return next, nil
}

// Owns implements objectstore.EntryCredentialIssuer.
func (m *minioEntryIssuer) Owns(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, id string) (bool, error) {
	accounts, err := m.accounts(ctx, bucket, prefix, access)
	if err != nil {
		return false, err
	}
	now := time.Now()
	return slices.ContainsFunc(accounts, func(a madmin.ServiceAccountInfo) bool {
		expired := a.Expiration != nil && a.Expiration.Unix() > 0 && !a.Expiration.After(now)
		return a.AccessKey == id && !expired
	}), nil
}

// CredentialID implements objectstore.EntryCredentialIssuer.
func (m *minioEntryIssuer) CredentialID(data map[string][]byte) string {
	return entryCredentialID(data)
}

// CredentialReach implements objectstore.EntryCredentialIssuer.
func (m *minioEntryIssuer) CredentialReach(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	return entryCredentialReach("a MinIO service account", bucket, prefix, access)
}

// Headroom implements objectstore.EntryCredentialIssuer: MinIO documents no limit of a user's
// service accounts or of a deployment's users, so it is Unbounded (no figure is invented).
func (m *minioEntryIssuer) Headroom(context.Context) (objectstore.Headroom, error) {
	return objectstore.Headroom{Unbounded: true, Principals: "MinIO service accounts"}, nil
}

// SweepEntryCredentials implements objectstore.EntryCredentialIssuer: the service accounts of
// the bucket's parent user whose description is of this bucket and not kept, then, with none
// kept, the parent user (only while it carries the bucket's entries' policy) and that policy. A
// service account of the parent without this project's description is kept, and so is the
// parent with it. A description hashed for its length (entryDescription) is matched against
// the live entries' and kept whenever the sweep keeps read-only principals (its access cannot
// be read from it).
func (m *minioEntryIssuer) SweepEntryCredentials(ctx context.Context, bucket string, sweep objectstore.EntrySweep) (int, error) {
	parent := entryParent(bucket)
	resp, err := m.admin.ListServiceAccounts(ctx, parent)
	if err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminNoSuchUser" {
		return 0, minioError("listing the MinIO service accounts of the bucket's entries", err)
	}
	now, kept := time.Now(), 0
	for _, a := range resp.Accounts {
		if m.sweepKeeps(bucket, a, sweep, now) {
			kept++
			continue
		}
		if err := m.admin.DeleteServiceAccount(ctx, a.AccessKey); err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminServiceAccountNotFound" {
			return kept, minioError("deleting MinIO service account "+a.AccessKey, err)
		}
	}
	if kept > 0 {
		return kept, nil
	}
	info, err := m.admin.GetUserInfo(ctx, parent)
	switch {
	case err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminNoSuchUser":
		return 0, minioError("reading MinIO user "+parent, err)
	case err == nil && info.PolicyName != entryParentPolicy(bucket):
		return 0, nil // not the parent this issuer made (its policy is another's): not ours to remove
	case err == nil:
		if err := m.admin.RemoveUser(ctx, parent); err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminNoSuchUser" {
			return 0, minioError("deleting MinIO user "+parent, err)
		}
	}
	// Removed after the parent: a sweep interrupted between the two removes the policy when run
	// again, and a parent without its policy is never left.
	if err := m.admin.RemoveCannedPolicy(ctx, entryParentPolicy(bucket)); err != nil && madmin.ToErrorResponse(err).Code != "XMinioAdminNoSuchPolicy" {
		return 0, minioError("deleting MinIO policy "+entryParentPolicy(bucket), err)
	}
	return 0, nil
}

// sweepKeeps says whether a sweep of bucket keeps the service account a of the bucket's parent.
func (m *minioEntryIssuer) sweepKeeps(bucket string, a madmin.ServiceAccountInfo, sweep objectstore.EntrySweep, now time.Time) bool {
	if sweep.KeepRetiring && retiring(a, now) {
		return true
	}
	for _, p := range sweep.Live {
		for _, access := range []objectstore.EntryAccess{objectstore.EntryReadWrite, objectstore.EntryReadOnly} {
			if a.Description == entryDescription(bucket, p, access) {
				return true
			}
		}
	}
	mark := "gardener-extension-backup bucket=" + bucket + " prefix="
	if rest, ours := strings.CutPrefix(a.Description, mark); ours {
		i := strings.LastIndex(rest, " access=")
		if i < 0 {
			return true // not a description entryDescription writes
		}
		return sweep.Keeps(rest[:i], objectstore.EntryAccess(rest[i+len(" access="):]))
	}
	if strings.HasPrefix(a.Description, "gardener-extension-backup entry sha256=") {
		return sweep.KeepReadOnly
	}
	return true // not this project's: kept, and the parent with it
}
