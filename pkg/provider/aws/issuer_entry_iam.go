// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package aws

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/gardener-extension-backup/gardener-extension-backup/pkg/objectstore"
)

// iamEntryIssuer issues an entry's credentials as access keys of one IAM user per entry and
// access, whose inline policy reaches only the entry's prefix (entryPolicy). AWS's limits:
// 5,000 users per account (not adjustable), 2 access keys per user, 2,048 characters of inline
// policy per user. The user is tagged with the bucket, the prefix and the access; a retiring key
// with the time it retires at (tag retire-<key ID>), deleted at that time by
// EndRetiredEntryCredentials (or an issuance or revocation after it).
type iamEntryIssuer struct {
	*iamIssuer

	provider *Provider
	region   string
}

var _ objectstore.EntryCredentialIssuer = (*iamEntryIssuer)(nil)

const (
	iamEntryPolicyName = "etcd-backup-entry"
	// iamInlinePolicyLimit is AWS's limit of an IAM user's inline policies, in characters
	// without white space.
	iamInlinePolicyLimit = 2048
	tagBucket            = "gardener-backup-bucket"
	tagPrefix            = "gardener-backup-prefix"
	tagAccess            = "gardener-backup-access"
	tagRetirePrefix      = "retire-"
)

// IAMEntryUserName is the IAM user of prefix of bucket with access: 40 hex digits of their
// SHA-256 (IAM user names are at most 64 characters); its tags name them in full.
func IAMEntryUserName(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	return iamEntryUserName(bucket, prefix.String(), access)
}

// iamEntryUserPrefix starts the name of every entry user (IAMEntryUserName).
const iamEntryUserPrefix = "gardener-backup-e-"

func iamEntryUserName(bucket, prefix string, access objectstore.EntryAccess) string {
	sum := sha256.Sum256([]byte(bucket + "\x00" + prefix + "\x00" + string(access)))
	return iamEntryUserPrefix + hex.EncodeToString(sum[:])[:40]
}

// entryUser reads the tags of an entry's user: ok is false when there is none or it is not
// this extension's user of that entry.
func (s *iamEntryIssuer) entryUser(ctx context.Context, user, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) (tags map[string]string, ok bool, err error) {
	out, err := s.iam.ListUserTags(ctx, &iam.ListUserTagsInput{UserName: aws.String(user)})
	if err != nil {
		if err = iamError("reading the tags of IAM user "+user, err); errors.Is(err, objectstore.ErrNotFound) {
			return nil, false, nil
		}
		return nil, false, err
	}
	tags = map[string]string{}
	for _, t := range out.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	ok = tags[managedByTag] == managedByValue && tags[tagBucket] == bucket && tags[tagPrefix] == prefix.String() && tags[tagAccess] == string(access)
	return tags, ok, nil
}

// IssueEntryCredential implements objectstore.EntryCredentialIssuer.
func (s *iamEntryIssuer) IssueEntryCredential(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, inUse []string) (objectstore.Credential, error) {
	policy, err := entryPolicy(bucket, prefix, access)
	if err != nil {
		return objectstore.Credential{}, err
	}
	if len(policy) > iamInlinePolicyLimit {
		return objectstore.Credential{}, objectstore.Invalidf("the policy of entry %q of bucket %q has %d characters, over IAM's limit of %d for a user's inline policies", prefix.String(), bucket, len(policy), iamInlinePolicyLimit)
	}
	user := IAMEntryUserName(bucket, prefix, access)
	_, err = s.iam.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String(user), Tags: []iamtypes.Tag{
		{Key: aws.String(managedByTag), Value: aws.String(managedByValue)},
		{Key: aws.String(tagBucket), Value: aws.String(bucket)},
		{Key: aws.String(tagPrefix), Value: aws.String(prefix.String())},
		{Key: aws.String(tagAccess), Value: aws.String(string(access))},
	}})
	var exists *iamtypes.EntityAlreadyExistsException
	var limit *iamtypes.LimitExceededException
	switch {
	case errors.As(err, &limit):
		return objectstore.Credential{}, fmt.Errorf("creating IAM user %s for entry %q: %w: the account has as many IAM users as AWS allows (5,000, not adjustable): delete unused IAM users, give this seed's backups an account of their own, or switch entryCredentials off for a seed: %w", user, prefix.String(), objectstore.ErrQuotaExceeded, err)
	case errors.As(err, &exists):
		if _, ours, err := s.entryUser(ctx, user, bucket, prefix, access); err != nil || !ours {
			if err == nil {
				err = fmt.Errorf("%w: IAM user %s is not tagged as this extension's user of entry %q of bucket %q: not taken over", objectstore.ErrOwnedByOther, user, prefix.String(), bucket)
			}
			return objectstore.Credential{}, err
		}
	case err != nil:
		return objectstore.Credential{}, iamError("creating IAM user "+user, err)
	}
	if _, err := s.iam.PutUserPolicy(ctx, &iam.PutUserPolicyInput{UserName: aws.String(user), PolicyName: aws.String(iamEntryPolicyName), PolicyDocument: aws.String(string(policy))}); err != nil {
		return objectstore.Credential{}, iamError("setting the policy of IAM user "+user, err)
	}
	left, err := s.deleteEntryKeys(ctx, user, bucket, prefix, access, inUse, true)
	if err != nil {
		return objectstore.Credential{}, err
	}
	if len(left) >= 2 {
		// IAM's limit of two keys, both retiring (a migration within a rotation's grace, or
		// there and back within the migration grace): the entry needs a credential more than
		// the grace of the one retiring soonest, which ends now.
		if left, err = s.endSoonestRetiring(ctx, user, bucket, prefix, access, left, inUse); err != nil {
			return objectstore.Credential{}, err
		}
	}
	if len(left) >= 2 {
		return objectstore.Credential{}, fmt.Errorf("%w: IAM user %s has two access keys in use (%s), IAM's limit", objectstore.ErrQuotaExceeded, user, strings.Join(left, ", "))
	}
	key, err := s.iam.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String(user)})
	if err != nil {
		return objectstore.Credential{}, iamError("creating an access key for IAM user "+user, err)
	}
	id := aws.ToString(key.AccessKey.AccessKeyId)
	data := maps.Clone(s.template)
	data[KeyAccessKeyID], data[KeySecretAccessKey] = []byte(id), []byte(aws.ToString(key.AccessKey.SecretAccessKey))
	if err := s.provider.proveEntryCredential(ctx, data, s.region, bucket, prefix); err != nil {
		_, _ = s.iam.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String(user), AccessKeyId: aws.String(id)})
		return objectstore.Credential{}, err
	}
	return objectstore.Credential{ID: id, Data: data}, nil
}

// endSoonestRetiring deletes, of the user's keys left, the one not in use that retires soonest,
// and returns the IDs left.
func (s *iamEntryIssuer) endSoonestRetiring(ctx context.Context, user, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, left, inUse []string) ([]string, error) {
	tags, ours, err := s.entryUser(ctx, user, bucket, prefix, access)
	if err != nil || !ours {
		return left, err
	}
	soonest, soonestAt := "", time.Time{}
	for _, id := range left {
		at, err := time.Parse(time.RFC3339, tags[tagRetirePrefix+id])
		if slices.Contains(inUse, id) || err != nil {
			continue
		}
		if soonest == "" || at.Before(soonestAt) {
			soonest, soonestAt = id, at
		}
	}
	if soonest == "" {
		return left, nil
	}
	return s.deleteKeys(ctx, user, tags, slices.DeleteFunc(slices.Clone(left), func(id string) bool { return id == soonest }), false)
}

// deleteEntryKeys deletes the user's keys not kept (and, with spareRetiring, not retiring before
// their time) and returns the IDs left.
func (s *iamEntryIssuer) deleteEntryKeys(ctx context.Context, user, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, keep []string, spareRetiring bool) ([]string, error) {
	tags, ours, err := s.entryUser(ctx, user, bucket, prefix, access)
	if err != nil || !ours {
		return nil, err
	}
	return s.deleteKeys(ctx, user, tags, keep, spareRetiring)
}

// deleteKeys is deleteEntryKeys of a user known to be the entry's, with its tags.
func (s *iamEntryIssuer) deleteKeys(ctx context.Context, user string, tags map[string]string, keep []string, spareRetiring bool) ([]string, error) {
	keys, err := s.iam.ListAccessKeys(ctx, &iam.ListAccessKeysInput{UserName: aws.String(user)})
	if err != nil {
		return nil, iamError("listing the access keys of IAM user "+user, err)
	}
	now := time.Now()
	var left, gone []string
	for _, k := range keys.AccessKeyMetadata {
		id := aws.ToString(k.AccessKeyId)
		retireAt, retires := tags[tagRetirePrefix+id]
		at, perr := time.Parse(time.RFC3339, retireAt)
		if slices.Contains(keep, id) || (spareRetiring && retires && perr == nil && at.After(now)) {
			left = append(left, id)
			continue
		}
		gone = append(gone, id)
	}
	if err := s.endKeys(ctx, user, tags, gone); err != nil {
		return nil, err
	}
	return left, nil
}

// endKeys deletes the keys ids of user (one already gone counts as deleted) and their
// retire-<key ID> tags among tags.
func (s *iamEntryIssuer) endKeys(ctx context.Context, user string, tags map[string]string, ids []string) error {
	for _, id := range ids {
		if _, err := s.iam.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String(user), AccessKeyId: aws.String(id)}); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
			return iamError("deleting an access key of IAM user "+user, err)
		}
		if _, retires := tags[tagRetirePrefix+id]; retires {
			if _, err := s.iam.UntagUser(ctx, &iam.UntagUserInput{UserName: aws.String(user), TagKeys: []string{tagRetirePrefix + id}}); err != nil {
				return iamError("untagging IAM user "+user, err)
			}
		}
	}
	return nil
}

// RevokeEntryCredentials implements objectstore.EntryCredentialIssuer: with nothing kept, the
// user and its policy go too.
func (s *iamEntryIssuer) RevokeEntryCredentials(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, keep []string) error {
	user := IAMEntryUserName(bucket, prefix, access)
	if _, ours, err := s.entryUser(ctx, user, bucket, prefix, access); err != nil || !ours {
		return err // none, or somebody else's: nothing of ours to revoke
	}
	if _, err := s.deleteEntryKeys(ctx, user, bucket, prefix, access, keep, false); err != nil || len(keep) > 0 {
		return err
	}
	return s.deleteUser(ctx, user)
}

// deleteUser deletes an entry's user without keys: its inline policy first, as IAM requires.
func (s *iamEntryIssuer) deleteUser(ctx context.Context, user string) error {
	if _, err := s.iam.DeleteUserPolicy(ctx, &iam.DeleteUserPolicyInput{UserName: aws.String(user), PolicyName: aws.String(iamEntryPolicyName)}); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
		return iamError("deleting the policy of IAM user "+user, err)
	}
	if _, err := s.iam.DeleteUser(ctx, &iam.DeleteUserInput{UserName: aws.String(user)}); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
		return iamError("deleting IAM user "+user, err)
	}
	return nil
}

// RetireEntryCredentials implements objectstore.EntryCredentialIssuer: the user is tagged
// retire-<key ID>=<after>; a time not in the future deletes the keys at once.
func (s *iamEntryIssuer) RetireEntryCredentials(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, ids []string, after time.Time) error {
	user := IAMEntryUserName(bucket, prefix, access)
	if _, ours, err := s.entryUser(ctx, user, bucket, prefix, access); err != nil || !ours {
		return err
	}
	if !after.After(time.Now()) {
		for _, id := range ids {
			if _, err := s.iam.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String(user), AccessKeyId: aws.String(id)}); err != nil && !errors.Is(iamError("", err), objectstore.ErrNotFound) {
				return iamError("deleting an access key of IAM user "+user, err)
			}
		}
		return nil
	}
	var tags []iamtypes.Tag
	for _, id := range ids {
		tags = append(tags, iamtypes.Tag{Key: aws.String(tagRetirePrefix + id), Value: aws.String(after.UTC().Format(time.RFC3339))})
	}
	if _, err := s.iam.TagUser(ctx, &iam.TagUserInput{UserName: aws.String(user), Tags: tags}); err != nil {
		return iamError("tagging IAM user "+user+" with the retirement of its keys", err)
	}
	return nil
}

// EndRetiredEntryCredentials implements objectstore.EntryCredentialIssuer: the keys whose
// retire-<key ID> tag has come go, with the tag. Only those: IAM's listing is eventually
// consistent, so a key created just before (the one just published) may be missing from it, and
// no key is ever deleted for being absent.
func (s *iamEntryIssuer) EndRetiredEntryCredentials(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) (time.Time, error) {
	user := IAMEntryUserName(bucket, prefix, access)
	tags, ours, err := s.entryUser(ctx, user, bucket, prefix, access)
	if err != nil || !ours {
		return time.Time{}, err
	}
	keys, err := s.iam.ListAccessKeys(ctx, &iam.ListAccessKeysInput{UserName: aws.String(user)})
	if err != nil {
		return time.Time{}, iamError("listing the access keys of IAM user "+user, err)
	}
	now := time.Now()
	var due []string
	var next time.Time
	for _, k := range keys.AccessKeyMetadata {
		id := aws.ToString(k.AccessKeyId)
		at, err := time.Parse(time.RFC3339, tags[tagRetirePrefix+id])
		switch {
		case err != nil: // not retiring
		case at.After(now):
			if next.IsZero() || at.Before(next) {
				next = at
			}
		default:
			due = append(due, id)
		}
	}
	return next, s.endKeys(ctx, user, tags, due)
}

// Owns implements objectstore.EntryCredentialIssuer.
func (s *iamEntryIssuer) Owns(ctx context.Context, bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess, id string) (bool, error) {
	user := IAMEntryUserName(bucket, prefix, access)
	if _, ours, err := s.entryUser(ctx, user, bucket, prefix, access); err != nil || !ours {
		return false, err
	}
	keys, err := s.iam.ListAccessKeys(ctx, &iam.ListAccessKeysInput{UserName: aws.String(user)})
	if err != nil {
		return false, iamError("listing the access keys of IAM user "+user, err)
	}
	return slices.ContainsFunc(keys.AccessKeyMetadata, func(k iamtypes.AccessKeyMetadata) bool { return aws.ToString(k.AccessKeyId) == id }), nil
}

// CredentialID implements objectstore.EntryCredentialIssuer.
func (s *iamEntryIssuer) CredentialID(data map[string][]byte) string { return entryCredentialID(data) }

// CredentialReach implements objectstore.EntryCredentialIssuer.
func (s *iamEntryIssuer) CredentialReach(bucket string, prefix objectstore.Prefix, access objectstore.EntryAccess) string {
	return entryCredentialReach("an access key of IAM user "+IAMEntryUserName(bucket, prefix, access), bucket, prefix, access)
}

// Headroom implements objectstore.EntryCredentialIssuer: GetAccountSummary's Users and
// UsersQuota, every IAM user of the account (the operator's, other tools', every bucket's
// entries), which is what CreateUser's LimitExceeded counts. It needs iam:GetAccountSummary.
func (s *iamEntryIssuer) Headroom(ctx context.Context) (objectstore.Headroom, error) {
	out, err := s.iam.GetAccountSummary(ctx, &iam.GetAccountSummaryInput{})
	if err != nil {
		return objectstore.Headroom{}, iamError("reading the account's summary (iam:GetAccountSummary)", err)
	}
	used, okUsed := out.SummaryMap[string(iamtypes.SummaryKeyTypeUsers)]
	limit, okLimit := out.SummaryMap[string(iamtypes.SummaryKeyTypeUsersQuota)]
	if !okUsed || !okLimit {
		return objectstore.Headroom{}, fmt.Errorf("the account's summary has no %s or %s: %v", iamtypes.SummaryKeyTypeUsers, iamtypes.SummaryKeyTypeUsersQuota, out.SummaryMap)
	}
	return objectstore.Headroom{Used: int(used), Limit: int(limit), Principals: "IAM users of the account"}, nil
}

// SweepEntryCredentials implements objectstore.EntryCredentialIssuer: every IAM user whose name
// starts as an entry user's (ListUsers, in pages) is read (ListUserTags) and swept only when its
// tags say this extension made it for bucket and its name is the one IAMEntryUserName gives for
// its tagged prefix and access; its keys go, then its policy and itself. The cost is ListUsers's
// pages (1,000 users each) and one ListUserTags per entry user of the account, every bucket's:
// 5,005 requests with IAM's 5,000 users, read iamSweepParallelism at a time to keep a full
// account's sweep inside the reconcile's 3 minutes. The first error stops it (returned alone: a
// refusal is the same for every user); an interrupted sweep resumes by running again (what it
// deleted is not listed again).
func (s *iamEntryIssuer) SweepEntryCredentials(ctx context.Context, bucket string, sweep objectstore.EntrySweep) (int, error) {
	var (
		mu       sync.Mutex
		kept     int
		firstErr error
		pending  sync.WaitGroup
		slots    = make(chan struct{}, iamSweepParallelism)
	)
	failed := func() bool { mu.Lock(); defer mu.Unlock(); return firstErr != nil }
	pages := iam.NewListUsersPaginator(s.iam, &iam.ListUsersInput{MaxItems: aws.Int32(1000)})
	for pages.HasMorePages() && !failed() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			pending.Wait()
			return kept, cmp.Or(firstErr, iamError("listing IAM users", err))
		}
		for _, u := range page.Users {
			user := aws.ToString(u.UserName)
			if !strings.HasPrefix(user, iamEntryUserPrefix) {
				continue
			}
			if slots <- struct{}{}; failed() {
				break
			}
			pending.Go(func() {
				defer func() { <-slots }()
				stays, err := s.sweepUser(ctx, user, bucket, sweep)
				mu.Lock()
				defer mu.Unlock()
				if stays {
					kept++
				}
				firstErr = cmp.Or(firstErr, err)
			})
		}
	}
	pending.Wait()
	return kept, firstErr
}

// iamSweepParallelism bounds the IAM requests of a sweep in flight: at about 50 ms a request
// (an estimate, not measured on AWS), 5,000 users' tags are read in about 30 s, with few enough
// requests at once not to meet IAM's throttling.
const iamSweepParallelism = 8

// sweepUser sweeps one entry user unless it is not bucket's or the sweep keeps it; stays is true
// for a user of bucket that the sweep keeps.
func (s *iamEntryIssuer) sweepUser(ctx context.Context, user, bucket string, sweep objectstore.EntrySweep) (stays bool, err error) {
	out, err := s.iam.ListUserTags(ctx, &iam.ListUserTagsInput{UserName: aws.String(user)})
	if err != nil {
		if err = iamError("reading the tags of IAM user "+user, err); errors.Is(err, objectstore.ErrNotFound) {
			return false, nil // gone meanwhile
		}
		return false, err
	}
	tags := map[string]string{}
	for _, t := range out.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	prefix, access := tags[tagPrefix], objectstore.EntryAccess(tags[tagAccess])
	if tags[managedByTag] != managedByValue || tags[tagBucket] != bucket || user != iamEntryUserName(bucket, prefix, access) {
		return false, nil // another bucket's, or not this extension's: not touched
	}
	if sweep.Keeps(prefix, access) {
		return true, nil
	}
	left, err := s.deleteKeys(ctx, user, tags, nil, sweep.KeepRetiring)
	if err != nil || len(left) > 0 {
		return len(left) > 0, err
	}
	return false, s.deleteUser(ctx, user)
}
